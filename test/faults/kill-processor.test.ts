// kill -9 of the processor mid-load. The edge and the processor run as separate `chorus start`
// processes under a supervisor that starts an ended process again, as systemd or Kubernetes would.
// The restarted processor must catch up by itself.
import { describeKill9 } from '../helpers/fault-scenario.ts';

describeKill9(
  'processor',
  'kill -9 of the processor mid-load loses and duplicates nothing, and the restarted one catches up',
);
