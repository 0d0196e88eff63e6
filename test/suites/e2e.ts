// The end-to-end files that share a process (E2E_TOGETHER), one after the other.
import { E2E_TOGETHER } from '../test-files.ts';
import { together } from './together.ts';

together('the end-to-end tests that share a process', E2E_TOGETHER, { exitWhenDone: true });
