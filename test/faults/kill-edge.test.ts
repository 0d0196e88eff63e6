// kill -9 of the edge mid-load. The edge and the processor run as separate `chorus start`
// processes under a supervisor that starts an ended process again, as systemd or Kubernetes would.
// Requests cut off by the kill are retried by the client (a create with the same
// `Idempotency-Key`), and the restarted edge must take writes again.
import { describeKill9 } from '../helpers/fault-scenario.ts';

describeKill9(
  'edge',
  'kill -9 of the edge mid-load loses and duplicates nothing acknowledged, and the restarted edge takes writes again',
);
