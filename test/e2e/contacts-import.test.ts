// `chorus contacts import` as an operator runs it: a CSV exported from another tool, with a few bad
// lines among good ones, imported through the log (the contact processor stores what the user
// routes would), each bad line named by its number; the same file again changes nothing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { runChorus } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';

const FILE = [
  '\uFEFFuserId,email,plan,company',
  'ada,ada@example.com,pro,"Lovelace, Ltd"',
  'bob,not-an-email,free,Bob Inc',
  'carol,carol@example.com,,"Multi',
  'line ""Co"""',
  'dave,dave@example.com,pro',
  ',nobody@example.com,pro,X',
  'erin,erin@example.com,enterprise,Erin GmbH',
  '',
].join('\r\n');

describe('chorus contacts import', () => {
  let app: RunningChorus;
  let env: string;
  let key: string;
  let dir: string;
  const contacts = async () => {
    const reply = await call(
      app.baseUrl,
      'GET',
      `/api/v1/management/contacts?environmentId=${env}`,
      undefined,
      {
        'x-api-key': key,
      },
    );
    return new Map(
      (reply.body.data as { userId: string; attributes: Record<string, string> }[]).map((c) => [
        c.userId,
        c.attributes,
      ]),
    );
  };

  before(async () => {
    app = await startTestChorus('e2e_contacts_import');
    ({ environmentId: env, apiKey: key } = await app.createEnvironment('enterprise'));
    dir = await mkdtemp(join(tmpdir(), 'chorus-import-'));
  });
  after(async () => {
    await app?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('good lines become contacts through the log, bad ones are named by line, and a second run changes nothing', async () => {
    const file = join(dir, 'contacts.csv');
    await writeFile(file, FILE);
    const first = await runChorus(['contacts', 'import', file, '--environment', env], app.world.env);
    assert.equal(first.code, 1, `some lines are refused: ${first.stderr}`);
    assert.match(first.stderr, /^line 3: attributes\.email must be a valid email$/m);
    assert.match(first.stderr, /^line 6: 3 fields where the header has 4$/m);
    assert.match(first.stderr, /^line 7: userId userId is required$/m);
    assert.match(first.stderr, /^3 contacts imported, 3 lines refused$/m);

    await waitFor(async () => (await contacts()).size === 3, { what: 'three contacts stored' });
    const stored = await contacts();
    assert.deepEqual(stored.get('ada'), {
      userId: 'ada',
      email: 'ada@example.com',
      plan: 'pro',
      company: 'Lovelace, Ltd',
    });
    assert.deepEqual(stored.get('carol'), {
      userId: 'carol',
      email: 'carol@example.com',
      company: 'Multi\r\nline "Co"',
    });
    assert.equal(stored.get('erin')?.plan, 'enterprise');

    const again = await runChorus(['contacts', 'import', file, '--environment', env], app.world.env);
    assert.equal(again.code, 1, again.stderr);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.deepEqual(await contacts(), stored, 'the same file twice: the same contacts');
  });

  test('a file without a userId column, or an environment on a free plan, is refused before anything is sent', async () => {
    const noUserId = join(dir, 'no-user-id.csv');
    await writeFile(noUserId, 'email,plan\nada@example.com,pro\n');
    const refused = await runChorus(['contacts', 'import', noUserId, '--environment', env], app.world.env);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /the header line has no userId column/);

    const free = await app.createEnvironment('free');
    const onFree = await runChorus(
      ['contacts', 'import', noUserId, '--environment', free.environmentId],
      app.world.env,
    );
    assert.equal(onFree.code, 1);
    assert.match(onFree.stderr, /enterprise plan/);
  });
});
