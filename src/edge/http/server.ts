// Which adapter serves the edge (HTTP_SERVER): uWebSockets.js where a build of it loads on this
// Node and C library (uws-builds.ts), else node:http, which is slower but answers alike. `auto`
// says once, as a warning, what kept uWS from loading; `uws` refuses to start without it; `node`
// never tries it.
import type { HttpServerChoice } from '../../config.ts';
import type { Logger } from '../../logger.ts';
import type { HttpServer, ServerOptions } from './types.ts';

export interface ServingHttp extends HttpServer {
  /** What serves: the uWS build (`@trufflesuite/uws-js-unofficial@20.30.0-unofficial.0`) or `node:http`. */
  adapter: string;
}

export async function serveHttp(
  choice: HttpServerChoice,
  options: ServerOptions,
  logger: Logger,
): Promise<ServingHttp> {
  if (choice !== 'node') {
    // Loaded only here: a process that never serves HTTP never loads a native uWS binary.
    const { loadUws } = await import('./uws-builds.ts');
    const build = loadUws();
    if (build.loaded) {
      const { listenWithUws } = await import('./uws-server.ts');
      return { ...(await listenWithUws(build.uws, options)), adapter: build.name };
    }
    if (choice === 'uws')
      throw new Error(`HTTP_SERVER=uws, but no uWebSockets.js build loads on ${build.missing}`);
    logger.warn(
      `no uWebSockets.js build loads on ${build.missing}; serving HTTP through node:http instead (slower)`,
    );
  }
  const { listenWithNode } = await import('./node-server.ts');
  return { ...(await listenWithNode(options)), adapter: 'node:http' };
}
