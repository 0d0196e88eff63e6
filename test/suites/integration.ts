// Every integration test file of src/ (`*.integration.test.ts`), in one process, but those that
// need a process of their own (RUNS_ALONE).
import { isIntegrationTest, RUNS_ALONE, testFiles } from '../test-files.ts';
import { together } from './together.ts';

together(
  'the integration tests of src/',
  testFiles('src').filter((f) => isIntegrationTest(f) && !RUNS_ALONE.includes(f)),
);
