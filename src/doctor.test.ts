import { test } from 'node:test';
import assert from 'node:assert/strict';
import { javaMajor, nodeFinding, report, satisfies } from './doctor.ts';

test('the Node check accepts exactly the versions of an engines range', () => {
  assert.ok(satisfies('20.19.0', '>=20.19 <21'));
  assert.ok(satisfies('20.20.2', '>=20.19 <21'));
  assert.ok(!satisfies('20.18.3', '>=20.19 <21'));
  assert.ok(!satisfies('21.0.0', '>=20.19 <21'));
  assert.ok(satisfies('24.1.0', '>=20.19 <21 || >=22.12'));
  assert.ok(!satisfies('22.11.0', '>=20.19 <21 || >=22.12'));
  assert.ok(satisfies('22.12.0', '^20.19 || ^22.12 || ^24'));
  assert.ok(!satisfies('23.0.0', '^20.19 || ^22.12 || ^24'));
  assert.ok(satisfies('20.5.1', '20.x'));
  assert.ok(satisfies('18.0.0', '*'));
  assert.equal(nodeFinding('18.20.0', '>=20.19 <21').ok, false);
  assert.match(nodeFinding('18.20.0', '>=20.19 <21').detail, /install Node\.js >=20\.19 <21/);
});

test("the Java check reads the major version of both of java -version's formats", () => {
  assert.equal(javaMajor('openjdk version "17.0.15" 2025-04-15\nOpenJDK Runtime Environment'), 17);
  assert.equal(javaMajor('openjdk version "21" 2023-09-19'), 21);
  assert.equal(javaMajor('java version "1.8.0_392"'), 8);
  assert.equal(javaMajor('no version here'), undefined);
});

test('the report is one line per prerequisite, then what to do', () => {
  const printed = report([
    { subject: 'Node.js', ok: true, detail: '20.20.2' },
    { subject: 'Java', ok: false, detail: 'not on the PATH: install Java 17 or newer' },
  ]);
  assert.equal(
    printed,
    [
      'ok       Node.js  20.20.2',
      'missing  Java     not on the PATH: install Java 17 or newer',
      '1 missing: see the lines above, then run `npx chorus doctor` again.',
      '',
    ].join('\n'),
  );
});
