// Notion as a destination: a page per finished response in the linked database, its properties
// filled from the mapped questions.
import { invalidInput } from '../../errors.ts';
import { inSpan } from '../../observability/tracing.ts';
import type { Destination, ProviderDescriptor } from '../destination.ts';
import { createNotionApi, type NotionConfig } from './notion-api.ts';
import { mappingProblems, pageProperties } from './properties.ts';

export const notionProvider: ProviderDescriptor<'notion'> = {
  name: 'notion',
  linkTargets: 'databases',
  createDestination: ({ notion }) => notion && notionDestination(notion),
};

export function notionDestination(config: NotionConfig): Destination {
  const api = createNotionApi(config);
  return {
    provider: 'notion',
    clientId: config.clientId,
    authorizeUrl(redirectUri, state) {
      const url = new URL(`${config.apiUrl.replace(/\/+$/, '')}/v1/oauth/authorize`);
      url.searchParams.set('client_id', config.clientId);
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('state', state);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('owner', 'user');
      return url;
    },
    exchangeCode: (code, redirectUri) => api.exchangeCode(code, redirectUri),
    listTargets: (token) => api.searchDatabases(token),
    async linkMapping(token, questions, request) {
      if (!request.mapping) throw invalidInput({ mapping: 'Required: question → Notion property' });
      const properties = await api.databaseProperties(token, request.targetId);
      // Refused now, with the reason, rather than failing on every delivery later.
      const problems = mappingProblems(questions, request.mapping, properties);
      if (Object.keys(problems).length > 0)
        throw invalidInput(problems, 'The mapping does not fit the Notion database');
      return request.mapping.map((m) => ({ ...m, propertyType: properties[m.property]!.type }));
    },
    prepare({ questions, mapping, data }) {
      const pairs = mapping.map((m) => ({ questionId: m.questionId, property: m.property ?? '' }));
      const types = Object.fromEntries(
        mapping.map((m) => [m.property ?? '', { type: m.propertyType ?? 'rich_text' }]),
      );
      const properties = pageProperties(questions, pairs, types, data);
      return async (token, databaseId, deliveryId) => {
        const page = await inSpan('notion pages.create', { kind: 'client' }, () =>
          api.createPage(token, databaseId, properties, deliveryId),
        );
        return page.externalId;
      };
    },
    // The page is recognised by the marker naming this delivery, never by its properties (two
    // responses may read alike); pages recorded for other deliveries are skipped unread.
    findSent: async (token, databaseId, deliveryId, since, taken) =>
      api.findPage(token, databaseId, deliveryId, since, await taken()),
  };
}
