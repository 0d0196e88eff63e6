// Slack as a destination: a message per finished response in the linked channel.
import { invalidInput } from '../../errors.ts';
import { inSpan } from '../../observability/tracing.ts';
import type { Destination, ProviderDescriptor } from '../destination.ts';
import { slackMessage } from './message.ts';
import { createSlackApi, SLACK_SCOPES, type SlackConfig } from './slack-api.ts';

export const slackProvider: ProviderDescriptor<'slack'> = {
  name: 'slack',
  linkTargets: 'channels',
  createDestination: ({ slack }) => slack && slackDestination(slack),
};

export function slackDestination(config: SlackConfig & { authorizeUrl: string }): Destination {
  const api = createSlackApi(config);
  return {
    provider: 'slack',
    clientId: config.clientId,
    authorizeUrl(redirectUri, state) {
      const url = new URL(config.authorizeUrl);
      url.searchParams.set('client_id', config.clientId);
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('state', state);
      url.searchParams.set('scope', SLACK_SCOPES.join(','));
      return url;
    },
    exchangeCode: (code, redirectUri) => api.exchangeCode(code, redirectUri),
    listTargets: (token) => api.listChannels(token),
    linkMapping(_token, questions, request) {
      const known = new Set(questions.map((q) => q.id));
      const questionIds = request.questionIds ?? [...known];
      const unknown = questionIds.filter((id) => !known.has(id));
      if (unknown.length > 0)
        throw invalidInput(Object.fromEntries(unknown.map((id) => [id, 'Not a question of this survey'])));
      return Promise.resolve(questionIds.map((questionId) => ({ questionId })));
    },
    prepare({ surveyName, questions, mapping, data }) {
      const message = slackMessage({ surveyName, questions, mapped: mapping.map((m) => m.questionId), data });
      return async (token, channel, deliveryId) => {
        const sent = await inSpan('slack chat.postMessage', { kind: 'client' }, () =>
          api.postMessage(token, channel, message, deliveryId),
        );
        return sent.externalId;
      };
    },
    findSent: (token, channel, deliveryId, since) => api.findMessage(token, channel, deliveryId, since),
  };
}
