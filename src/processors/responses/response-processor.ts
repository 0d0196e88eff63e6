// The response processor: consumes the `responses` topic and keeps the `responses` table.
import { ResponseCommandCheck, type ResponseCommand } from '../../events/responses.ts';
import type { ResponseFact } from '../../events/response-events.ts';
import type { Processor } from '../../pipeline/batch-handler.ts';
import { applyCommands } from './apply-commands.ts';
import { parkedForDecidedResponses } from '../../store/parked-commands.ts';

export const responseProcessor: Processor<ResponseCommand, ResponseFact> = {
  schema: ResponseCommandCheck,
  keyOf: (command) => command.responseId,
  apply: applyCommands,
  // An update parked until its create is applied goes on once the response is stored or refused.
  parking: { ready: parkedForDecidedResponses, expiredReason: 'response_not_found' },
};
