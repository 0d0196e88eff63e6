// The HTTP edge suite (http-edge-suite.ts) over the node:http adapter, which serves where no
// uWebSockets.js build loads: the same handler, limits and error shapes as over uWS.
import { httpEdgeSuite } from './http-edge-suite.ts';

httpEdgeSuite('node');
