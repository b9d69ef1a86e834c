import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Migracao } from '../../lib/database';
import { MIGRACOES_FILES } from '../../models/files/migracoes';
import { MIGRACOES_HUB } from '../../models/hub/migracoes';
import { MIGRACOES_IDENTITY } from '../../models/identity/migracoes';
import { MIGRACOES_INTRANET } from '../../models/intranet';
import { MIGRACOES_LEADS } from '../../models/leads/migracoes';
import { MIGRACOES_SALES } from '../../models/sales/migracoes';

/**
 * A migration, once written, keeps its statements: databases record it by name only, so one changed
 * after some database ran it leaves that database without the change for good, and no later start
 * says so (docs/decisoes.md, Migrations). test/fixtures/migracoes.json holds each migration's name
 * and a digest of its code, in order. A change goes in a new migration; a new one is added to the
 * file with the digest this test prints. Only a change of the code's form alone (a comment, or a
 * compiler that writes it otherwise) may replace a digest.
 */
const SERVICOS: Record<string, Migracao[]> = {
  identity: MIGRACOES_IDENTITY,
  hub: MIGRACOES_HUB,
  leads: MIGRACOES_LEADS,
  intranet: MIGRACOES_INTRANET,
  sales: MIGRACOES_SALES,
  files: MIGRACOES_FILES,
};

const digesto = (m: Migracao) => createHash('sha256').update(m.up.toString()).digest('hex').slice(0, 16);

test('every migration written keeps its name, place and code; new ones are recorded', () => {
  const gravadas = JSON.parse(readFileSync(path.join(__dirname, '../fixtures/migracoes.json'), 'utf8'));
  const atuais = Object.fromEntries(Object.entries(SERVICOS).map(([servico, lista]) => [servico, lista.map((m) => [m.name, digesto(m)])]));
  expect(atuais).toEqual(gravadas);
});
