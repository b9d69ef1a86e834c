import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * scripts/prepare.sh, run by `npm start` and `npm test` before anything else, stops on a Node.js
 * the suite cannot run on (jose 6 is an ES module required from CommonJS: 20.19+ or 22.12+), before
 * it installs or starts anything. A fake `node` reports the version; every other command it would
 * run is a fake that logs it.
 */

const SCRIPT = path.resolve(__dirname, '../../scripts/prepare.sh');
let pasta: string;
beforeEach(() => {
  pasta = mkdtempSync(path.join(tmpdir(), 'prepare-'));
  for (const c of ['bash', 'dirname']) {
    symlinkSync(execFileSync('sh', ['-c', `command -v ${c}`], { encoding: 'utf8' }).trim(), path.join(pasta, c));
  }
});
afterEach(() => rmSync(pasta, { recursive: true, force: true }));

function rodarCom(versao: string) {
  const falso = (nome: string, corpo: string) => {
    writeFileSync(path.join(pasta, nome), `#!/bin/sh\n${corpo}\n`);
    chmodSync(path.join(pasta, nome), 0o755);
  };
  // anything past the version check fails at once, logged: the test only asks whether it got there
  falso('node', `[ "$1" = --version ] && { echo ${versao}; exit 0; }\necho "node $*" >>"${pasta}/log"; exit 1`);
  falso('npm', `echo "npm $*" >>"${pasta}/log"; exit 1`);
  const r = spawnSync(path.join(pasta, 'bash'), [SCRIPT], { env: { PATH: pasta }, encoding: 'utf8', timeout: 10_000 });
  let log = '';
  try {
    log = readFileSync(path.join(pasta, 'log'), 'utf8');
  } catch {
    // nothing ran past the check
  }
  return { codigo: r.status, erros: r.stderr, passou: log !== '' };
}

test.each(['v18.19.1', 'v20.18.3', 'v21.7.3', 'v22.11.0', 'v20', 'vinte.um'])('Node %s: stops, saying which version it needs, before installing or starting anything', (versao) => {
  const r = rodarCom(versao);
  expect(r.codigo).toBe(1);
  expect(r.erros).toContain(`Node.js 20.19 or later (22.12 or later in 22) is needed; this is ${versao}`);
  expect(r.passou).toBe(false);
});

test.each(['v20.19.0', 'v22.12.0', 'v24.1.0'])('Node %s: goes on to the dependencies and services', (versao) => {
  const r = rodarCom(versao);
  expect(r.erros).not.toContain('is needed');
  expect(r.passou).toBe(true);
});

describe('dependencies', () => {
  /** A project of its own: the script, a fake ensure-services, a lockfile and what node_modules holds. */
  function projeto(binarios: string[]) {
    const raiz = path.join(pasta, 'projeto');
    mkdirSync(path.join(raiz, 'scripts'), { recursive: true });
    copyFileSync(SCRIPT, path.join(raiz, 'scripts/prepare.sh'));
    writeFileSync(path.join(raiz, 'scripts/ensure-services.sh'), 'exit 0\n');
    writeFileSync(path.join(raiz, 'package-lock.json'), '{}');
    mkdirSync(path.join(raiz, 'node_modules/.bin'), { recursive: true });
    // installed after the lockfile was written, as npm leaves it
    const depois = new Date(Date.now() + 60_000);
    writeFileSync(path.join(raiz, 'node_modules/.package-lock.json'), '{}');
    utimesSync(path.join(raiz, 'node_modules/.package-lock.json'), depois, depois);
    for (const b of binarios) {
      writeFileSync(path.join(raiz, 'node_modules/.bin', b), '#!/bin/sh\n');
      chmodSync(path.join(raiz, 'node_modules/.bin', b), 0o755);
    }
    writeFileSync(path.join(pasta, 'node'), '#!/bin/sh\necho v20.19.0\n');
    writeFileSync(path.join(pasta, 'npm'), `#!/bin/sh\necho "npm $*" >>"${pasta}/log"\n`);
    chmodSync(path.join(pasta, 'node'), 0o755);
    chmodSync(path.join(pasta, 'npm'), 0o755);
    const r = spawnSync(path.join(pasta, 'bash'), [path.join(raiz, 'scripts/prepare.sh')], { env: { PATH: pasta, NODE_ENV: 'production' }, encoding: 'utf8', timeout: 10_000 });
    expect(r.status).toBe(0);
    return existsSync(path.join(pasta, 'log')) ? readFileSync(path.join(pasta, 'log'), 'utf8') : '';
  }

  it('installed with the development dependencies, the lockfile unchanged since: nothing is installed', () => {
    expect(projeto(['tsc', 'jest'])).toBe('');
  });

  it('installed without them (NODE_ENV=production leaves them out): installed again, asking for them', () => {
    expect(projeto(['tsc'])).toBe('npm ci --include=dev --no-audit --no-fund\n');
  });
});
