// ua-parser-js 1.x ships no types and there is no @types package in this project: only the part
// src/edge/request-meta.ts uses. The package is CommonJS (`module.exports = UAParser`).
declare module 'ua-parser-js' {
  interface UAParserResult {
    browser: { name?: string; version?: string };
    os: { name?: string; version?: string };
    /** `mobile`, `tablet`, `smarttv`, `console`, `wearable`, `embedded`, `xr`, or undefined. */
    device: { type?: string; vendor?: string; model?: string };
  }
  class UAParser {
    constructor(ua?: string);
    getResult(): UAParserResult;
  }
  export = UAParser;
}
