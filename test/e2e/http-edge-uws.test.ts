// The HTTP edge suite (http-edge-suite.ts) over uWebSockets.js: skipped, saying why, on a Node or
// C library that no uWS build loads on (there the edge serves through node:http, whose run of the
// suite is http-edge-node.test.ts).
import { loadUws } from '../../src/edge/http/uws-builds.ts';
import { httpEdgeSuite } from './http-edge-suite.ts';

const build = loadUws();
httpEdgeSuite('uws', !build.loaded && `no uWebSockets.js build loads on ${build.missing}`);
