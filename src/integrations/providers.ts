// The provider clients of this process, built once from config (absent when not configured).
import type { Config } from '../config.ts';
import { createNotionApi, type NotionApi } from './notion/notion-api.ts';
import { createSlackApi, type SlackApi } from './slack/slack-api.ts';

export interface ProviderApis {
  slack: (SlackApi & { clientId: string; authorizeUrl: string }) | undefined;
  notion: (NotionApi & { clientId: string; apiUrl: string }) | undefined;
}

export function createProviders(config: Config['integrations']): ProviderApis {
  const { slack, notion } = config;
  return {
    slack: slack && { ...createSlackApi(slack), clientId: slack.clientId, authorizeUrl: slack.authorizeUrl },
    notion: notion && { ...createNotionApi(notion), clientId: notion.clientId, apiUrl: notion.apiUrl },
  };
}
