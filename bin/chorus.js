#!/usr/bin/env node
// The `chorus` command. Sources are TypeScript run through tsx's loader (no build step to forget).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
process.exitCode = await main(process.argv.slice(2));
