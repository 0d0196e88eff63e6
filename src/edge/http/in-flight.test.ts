import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InFlight } from './in-flight.ts';

test('settles at once when nothing is in flight', async () => {
  assert.equal(await new InFlight().settled(1_000), 0);
});

test('settles when the last request in flight finishes, a finish counted once', async () => {
  const inFlight = new InFlight();
  const first = inFlight.begin();
  const second = inFlight.begin();
  const settled = inFlight.settled(5_000);
  first();
  first(); // a second call for the same request changes nothing
  setTimeout(second, 20);
  assert.equal(await settled, 0);
});

test('gives up after the timeout with how many are still in flight', async () => {
  const inFlight = new InFlight();
  inFlight.begin();
  inFlight.begin();
  assert.equal(await inFlight.settled(30), 2);
});
