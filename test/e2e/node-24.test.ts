// Chorus on Node 24: the unit tests and a start that serves (node-runtime-suite.ts).
import { nodeRuntimeSuite } from './node-runtime-suite.ts';

nodeRuntimeSuite(24);
