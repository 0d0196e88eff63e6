// Which uWebSockets.js build loads on the running Node and C library. uWS ships one native binary
// per platform, architecture and Node ABI; no single build covers every Node Chorus supports:
// - @trufflesuite/uws-js-unofficial (the `uWebSockets.js` dependency): Node 16, 18 and 20, glibc 2.17+;
// - @btc-vision/uwebsockets.js (an optional dependency): Node 20, 22, 24 and 25, but glibc 2.38+
//   (Debian 13, Ubuntu 24.04 and newer).
// Each binary is loaded by its path, not through the package's entry point: the @trufflesuite one
// falls back on its own to a slow JavaScript imitation (and prints to the console) when its binary
// does not load, and the edge wants to choose its fallback itself (server.ts).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type uWS from 'uWebSockets.js';

export type Uws = typeof uWS;

export type UwsBuild = { loaded: true; name: string; uws: Uws } | { loaded: false; missing: string };

interface Candidate {
  /** What `require` resolves to the package's entry file. */
  specifier: string;
  /** The package root and the binaries' folder, relative to the folder of the entry file. */
  root: string;
  binaries: string;
}

/** In the order they are tried: the build the HTTP adapter was measured against comes first. */
const CANDIDATES: readonly Candidate[] = [
  { specifier: 'uWebSockets.js', root: '..', binaries: '../binaries' },
  { specifier: '@btc-vision/uwebsockets.js', root: '.', binaries: '.' },
];

/** Node's ABI versions (`process.versions.modules`) of the majors that uWS builds name. */
const NODE_MAJOR_OF_ABI: Readonly<Record<string, string>> = {
  '93': '16',
  '108': '18',
  '115': '20',
  '127': '22',
  '137': '24',
  '141': '25',
};

const require = createRequire(import.meta.url);

/** The first build that loads here; otherwise, in one sentence, what each one is missing. */
export function loadUws(): UwsBuild {
  const problems: string[] = [];
  for (const candidate of CANDIDATES) {
    const tried = tryCandidate(candidate);
    if (tried.loaded) return tried;
    problems.push(tried.missing);
  }
  return { loaded: false, missing: `${runtime()}: ${problems.join('; ')}` };
}

function tryCandidate({ specifier, root, binaries }: Candidate): UwsBuild {
  let entry: string;
  try {
    entry = require.resolve(specifier);
  } catch {
    return { loaded: false, missing: `${specifier} is not installed` };
  }
  const dir = path.dirname(entry);
  const { name, version } = JSON.parse(readFileSync(path.join(dir, root, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  const build = `${name}@${version}`;
  const prefix = `uws_${process.platform}_${process.arch}_`;
  const binary = path.join(dir, binaries, `${prefix}${process.versions.modules}.node`);
  if (!existsSync(binary)) {
    const nodes = readdirSync(path.join(dir, binaries))
      .filter((file) => file.startsWith(prefix) && file.endsWith('.node'))
      .map((file) => file.slice(prefix.length, -'.node'.length))
      .sort((a, b) => Number(a) - Number(b))
      .map((abi) => NODE_MAJOR_OF_ABI[abi] ?? `ABI ${abi}`);
    const has = nodes.length > 0 ? `Node ${nodes.join(', ')} only` : 'nothing';
    return {
      loaded: false,
      missing: `${build} has no binary for it (${has} on ${process.platform}-${process.arch})`,
    };
  }
  try {
    return { loaded: true, name: build, uws: require(binary) as Uws };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const glibc = /GLIBC_([0-9.]+)' not found/.exec(message)?.[1];
    if (glibc)
      return { loaded: false, missing: `${build} needs glibc ${glibc} (found ${glibcVersion() ?? 'none'})` };
    return { loaded: false, missing: `${build} does not load: ${message.split('\n')[0]}` };
  }
}

/** "Node 22.23.3 (ABI 127) on linux-x64 with glibc 2.36". */
function runtime(): string {
  const glibc = glibcVersion();
  const libc = process.platform !== 'linux' ? '' : glibc ? ` with glibc ${glibc}` : ' without glibc (musl?)';
  return `Node ${process.versions.node} (ABI ${process.versions.modules}) on ${process.platform}-${process.arch}${libc}`;
}

/** The C library's version as Node's diagnostic report reads it (Linux with glibc only). */
function glibcVersion(): string | undefined {
  const report = process.report.getReport() as { header?: { glibcVersionRuntime?: string } };
  return report.header?.glibcVersionRuntime;
}
