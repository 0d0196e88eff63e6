// Every pure test file of src/ (`*.test.ts` but `*.integration.test.ts`), in one process.
import { isIntegrationTest, testFiles } from '../test-files.ts';
import { together } from './together.ts';

together(
  'the pure tests of src/',
  testFiles('src').filter((f) => !isIntegrationTest(f)),
);
