// What a browser sends before a cross-origin call whose method or headers are not "simple": an
// OPTIONS with the method and headers it is about to use, from the page's origin.
export function sendPreflight(
  baseUrl: string,
  path: string,
  { origin, method, headers }: { origin: string; method: string; headers: string },
): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method: 'OPTIONS',
    headers: {
      Origin: origin,
      'Access-Control-Request-Method': method,
      'Access-Control-Request-Headers': headers,
    },
  });
}
