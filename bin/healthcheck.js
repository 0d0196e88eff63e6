#!/usr/bin/env node
// The container image's HEALTHCHECK: exits 0 when the Chorus process of this container answers
// GET /health (alive; dependencies are readiness, /api/v2/health). The edge answers on PORT; a
// process without the edge (processor, integrations) on its metrics port, PROMETHEUS_EXPORTER_PORT,
// when PROMETHEUS_ENABLED=1.
const ports = [process.env.PORT || '3000', process.env.PROMETHEUS_EXPORTER_PORT || '9464'];

async function answers(port) {
  try {
    const reply = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2_000) });
    return reply.ok;
  } catch {
    return false;
  }
}

process.exitCode = (await Promise.all(ports.map(answers))).some(Boolean) ? 0 : 1;
