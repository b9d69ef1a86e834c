import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createConnection } from 'mysql2/promise';
import { config } from '../../config';
import { servidorDaUrl } from '../../lib/database';
import { portaLivre } from '../helpers/processo';

/**
 * scripts/ensure-services.sh, sourced, its functions run against stubs: the commands it finds are
 * only those of a folder of the test's (fakes that log their arguments, and links to the real
 * tools it needs), so nothing is installed, started or stopped on this machine.
 */

const SCRIPT = path.resolve(__dirname, '../../scripts/ensure-services.sh');
const REAIS = ['bash', 'node', 'env', 'mkdir', 'chmod', 'seq', 'sleep', 'cat', 'dirname', 'id', 'rm'];
const onde = Object.fromEntries(REAIS.map((c) => [c, execFileSync('sh', ['-c', `command -v ${c}`], { encoding: 'utf8' }).trim()]));

let pasta: string;
beforeEach(() => {
  pasta = mkdtempSync(path.join(tmpdir(), 'ensure-services-'));
  mkdirSync(path.join(pasta, 'bin'));
  for (const c of REAIS) symlinkSync(onde[c], path.join(pasta, 'bin', c));
  // never the real sudo: its own PATH would reach the real apt-get
  falso('sudo', '[ "$1" = -n ] && shift; exec "$@"');
});
afterEach(() => rmSync(pasta, { recursive: true, force: true }));

/** A command of the test's folder: logs its name and arguments, then runs `corpo` (sh). */
function falso(nome: string, corpo = '') {
  const arquivo = path.join(pasta, 'bin', nome);
  writeFileSync(arquivo, `#!/bin/sh\necho "${nome} $*" >>"$PASTA/log"\n${corpo}\n`);
  chmodSync(arquivo, 0o755);
}

/**
 * `passos` in bash after sourcing the script, with the test's folder as the only PATH; `semTerminal`:
 * in a session of its own (setsid), where no terminal can be opened.
 */
function rodar(passos: string, env: Record<string, string> = {}, semTerminal = false) {
  const comando = [onde.bash, '-c', `source "${SCRIPT}"\n${passos}`];
  // util-linux's setsid, looked up only by the test that needs it
  const setsid = semTerminal ? execFileSync('sh', ['-c', 'command -v setsid'], { encoding: 'utf8' }).trim() : '';
  const r = spawnSync(semTerminal ? setsid : comando[0], semTerminal ? ['--wait', ...comando] : comando.slice(1), {
    env: { PATH: path.join(pasta, 'bin'), HOME: pasta, PASTA: pasta, XDG_CACHE_HOME: path.join(pasta, 'cache'), XDG_STATE_HOME: path.join(pasta, 'state'), ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  const log = existsSync(path.join(pasta, 'log')) ? readFileSync(path.join(pasta, 'log'), 'utf8') : '';
  return { codigo: r.status, saida: r.stdout, erros: r.stderr, log };
}

test('a MYSQL_URL of [::1] is read as host ::1, named [::1]:port, and a MariaDB started for it listens there (Debian binds 127.0.0.1)', async () => {
  const porta = await portaLivre();
  falso('mariadbd');
  const r = rodar(
    `echo "$MYSQL_HOST $MYSQL_PORT $MYSQL_SOCKET $(where "$MYSQL_HOST" "$MYSQL_PORT")"
    mariadbd_path="$PASTA/bin/mariadbd"
    as_root() { echo "as_root $*" >>"$PASTA/log"; }
    wait_for() { :; }
    ensure_mariadb`,
    { MYSQL_URL: `mysql://root@[::1]:${porta}` },
  );
  expect(r.erros).toBe('');
  expect(r.saida).toBe(`::1 ${porta} - [::1]:${porta}\nstarting MariaDB\n`);
  expect(r.log).toContain(`--exec ${pasta}/bin/mariadbd -- --user=mysql --port=${porta} --log-error=/run/mysqld/suite-${porta}.err --innodb-buffer-pool-size=1G --bind-address=::1\n`);
});

test("something answering on Redis's port that does not take REDIS_URL (a password it lacks) stops the script with the server's reason; the suite's Redis passes", () => {
  // a Redis that wants a password (NOAUTH to every command, however many a read brings: ioredis 6
  // sends two at once after HELLO), in a process of its own: rodar blocks this one
  const r = rodar(
    `node -e 'const s = require("net").createServer((c) => c.on("data", (d) => c.write("-NOAUTH Authentication required.\\r\\n".repeat(d.toString().match(/(^|\\r\\n)[*][0-9]+\\r\\n/g).length))));
      s.listen(0, "127.0.0.1", () => console.log(s.address().port))' >"$PASTA/porta" &
    echo $! >"$PASTA/pid"
    trap 'kill "$(cat "$PASTA/pid")"' EXIT
    until [ -s "$PASTA/porta" ]; do sleep 0.1; done
    REDIS_URL="redis://127.0.0.1:$(cat "$PASTA/porta")" ensure_redis_login`,
  );
  expect(r.codigo).toBe(1);
  expect(r.erros).toContain("refuses REDIS_URL's connection: NOAUTH Authentication required.");
  // one that takes the connection and never answers does not hold the script
  const mudo = rodar(
    `node -e 'const s = require("net").createServer(() => undefined); s.listen(0, "127.0.0.1", () => console.log(s.address().port))' >"$PASTA/porta-do-mudo" &
    echo $! >"$PASTA/pid-do-mudo"
    trap 'kill "$(cat "$PASTA/pid-do-mudo")"' EXIT
    until [ -s "$PASTA/porta-do-mudo" ]; do sleep 0.1; done
    REDIS_URL="redis://127.0.0.1:$(cat "$PASTA/porta-do-mudo")" ensure_redis_login`,
  );
  expect(mudo.codigo).toBe(1);
  expect(mudo.erros).toContain("refuses REDIS_URL's connection: no answer in 5 seconds");
  expect(rodar('ensure_redis_login', { REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' })).toMatchObject({ codigo: 0, erros: '' });
});

test('a MariaDB started as the system service, which listens where its own configuration says, is named as such when MYSQL_URL asks for another address', async () => {
  const porta = await portaLivre();
  falso('mysqld');
  const r = rodar(
    `mariadbd_path="$PASTA/none"
    as_root() { echo "as_root $*" >>"$PASTA/log"; }
    wait_for() { return 1; }
    ensure_mariadb`,
    { MYSQL_URL: `mysql://root@[::1]:${porta}` },
  );
  expect(r.codigo).toBe(1);
  expect(r.log).toContain('as_root service mysql start\n');
  expect(r.erros).toContain(`the system's MariaDB service was started, and it listens where its configuration says, 127.0.0.1:3306 on Debian, not at [::1]:${porta}`);
});

test.each([
  ['listening when the install ends', 0],
  ['listening a moment after the install ends', 1500],
])("a Redis that its package's install starts (Debian's service, no append-only file), %s, is kept and given the script's settings, none started beside it", async (_, atrasoMs) => {
  const porta = await portaLivre();
  falso('redis-cli', 'echo OK');
  const r = rodar(
    `apt_install() {
      echo "apt_install $*" >>"$PASTA/log"
      printf '#!/bin/sh\\necho "redis-server $*" >>"$PASTA/log"\\n' >"$PASTA/bin/redis-server" && chmod +x "$PASTA/bin/redis-server" 2>/dev/null
      # the package's service, listening as Debian starts it (systemd may take a moment)
      node -e 'setTimeout(() => require("net").createServer((s) => s.end()).listen(Number(process.argv[1]), "127.0.0.1", () => console.log("ok")), Number(process.argv[2]))' "$REDIS_PORT" ${atrasoMs} >"$PASTA/pronto" &
      echo $! >"$PASTA/pid"
      [ ${atrasoMs} -gt 0 ] || until [ -s "$PASTA/pronto" ]; do sleep 0.1; done
    }
    trap 'kill "$(cat "$PASTA/pid")"' EXIT
    ensure_redis`,
    { REDIS_URL: `redis://127.0.0.1:${porta}` },
  );
  expect(r.erros).toBe('');
  expect(r.log).toBe(
    [
      'apt_install redis-server',
      `redis-cli -h 127.0.0.1 -p ${porta} CONFIG SET maxmemory-policy noeviction`,
      `redis-cli -h 127.0.0.1 -p ${porta} CONFIG SET appendonly yes`,
      `redis-cli -h 127.0.0.1 -p ${porta} CONFIG REWRITE`,
      '',
    ].join('\n'),
  );
});

/**
 * Debian's own service of each server, installed and enabled, stopped since (maintenance, a backup):
 * started through the system, never bypassed by a server of the script's own beside its data.
 */
describe.each([
  {
    servidor: 'Redis',
    servico: 'redis-server',
    programa: 'redis-server',
    preparo: 'redis_do_sistema() { return 0; }',
    garantir: 'ensure_redis',
    porta: '$REDIS_PORT',
    url: (porta: number) => ({ REDIS_URL: `redis://127.0.0.1:${porta}` }),
    falha: "the system's redis-server service, enabled, did not start: start it (see journalctl -u redis-server), or disable it for the suite to start a Redis of its own",
  },
  {
    servidor: 'MariaDB',
    servico: 'mariadb',
    programa: 'mariadbd',
    preparo: 'mariadb_do_sistema() { return 0; }\n      mariadbd_path="$PASTA/bin/mariadbd"',
    garantir: 'ensure_mariadb',
    porta: '$MYSQL_PORT',
    url: (porta: number) => ({ MYSQL_URL: `mysql://root@127.0.0.1:${porta}` }),
    falha: "the system's mariadb service, enabled, did not start: start it (see journalctl -u mariadb), or disable it for this script to start a server of its own",
  },
])("Debian's $servidor service installed and enabled, stopped since", (c) => {
  /** the `garantir` step with the server installed and the system's service present; `inicio`, what starting the service does */
  const comServico = (porta: number, inicio: string) =>
    rodar(
      `${c.preparo}
      as_root() { echo "as_root $*" >>"$PASTA/log"; [ "$1" = service ] || return 0; ${inicio}; }
      wait_for() { answers_within 5 "$2" "$3"; }
      trap '[ -s "$PASTA/pid" ] && kill "$(cat "$PASTA/pid")"' EXIT
      ${c.garantir}`,
      c.url(porta),
    );

  beforeEach(() => falso(c.programa));

  it("is started through the service, and no server of the script's own beside it (it would hold an empty store beside the service's data)", async () => {
    const r = comServico(
      await portaLivre(),
      `node -e 'require("net").createServer((s) => s.end()).listen(Number(process.argv[1]), "127.0.0.1")' "${c.porta}" & echo $! >"$PASTA/pid"`,
    );
    expect(r).toMatchObject({ codigo: 0, erros: '' });
    expect(r.log).toBe(`as_root service ${c.servico} start\n`);
  });

  it('that does not start: stops, saying where to look, and starts none of its own', async () => {
    const r = comServico(await portaLivre(), 'return 1');
    expect(r.codigo).toBe(1);
    expect(r.erros).toContain(c.falha);
    expect(r.log).toBe(`as_root service ${c.servico} start\n`);
  });
});

describe('the Mroonga package of the server version, when its install fails', () => {
  const VERSAO = '1:10.11.6-0+deb12u1';
  /** A local Debian MariaDB without the engine; apt knows no mariadb-plugin-mroonga of its version. */
  const duasVezes = (env: Record<string, string>) => {
    falso('dpkg-query', `printf '%s' '${VERSAO}'`);
    // apt-get update only warns when a source is out of reach, unless told to fail (Error-Mode=any)
    falso('apt-get', 'case "$*" in *update*Error-Mode=any*) [ "$REDE" = fora ] && exit 100; exit 0 ;; *update*) exit 0 ;; esac; exit 100');
    falso('apt-cache', 'exit 100');
    return rodar(
      `as_root() { "$@"; }
      sql() {
        case "$1" in
          *VERSION*) echo 10.11.6-MariaDB-0+deb12u1 ;;
          *@@hostname*) cat /proc/sys/kernel/hostname ;;
          *@@plugin_dir*) echo "$PASTA/plugins" ;;
        esac
      }
      ensure_mroonga || echo "falhou 1"
      ensure_mroonga || echo "falhou 2"`,
      env,
    );
  };
  const marca = () => path.join(pasta, 'cache', 'business-services-suite', 'mroonga-nao-instalado');
  const instalacoes = (log: string) => log.split('\n').filter((l) => l.startsWith('apt-get ') && l.includes(' install ')).length;

  test('with the network out (apt-get update warns, keeps lists that know nothing), leaves no marker: the next run tries again', () => {
    const r = duasVezes({ REDE: 'fora' });
    expect(r.saida).toContain('falhou 1\n');
    expect(existsSync(marca())).toBe(false);
    expect(instalacoes(r.log)).toBe(2);
  });

  test('with every source reached and that version not among them, writes the marker: the next run does not call apt', () => {
    const r = duasVezes({ REDE: 'ok' });
    expect(readFileSync(marca(), 'utf8')).toBe(`${VERSAO}\n`);
    expect(instalacoes(r.log)).toBe(1);
    expect(r.erros).toContain('could not be had before; not trying again');
  });
});

test("giving MYSQL_URL's user a login on a fresh local MariaDB: its password goes to the client on stdin, never on a command line (sudo logs them, ps shows them)", () => {
  const senha = 'S3nh4-secreta';
  // the client, through the fake sudo: the port asked for, no account with a password, and what it read on stdin
  falso('mariadb', `case "$*" in *@@port*) echo 3306 ;; *COUNT*) echo 0 ;; *) cat >>"$PASTA/entrada" ;; esac`);
  const r = rodar(
    `sql() { [ -e "$PASTA/liberado" ] && return 0; : >"$PASTA/liberado"; echo "Access denied for user" >&2; return 1; }
    ensure_login`,
    { MYSQL_URL: `mysql://suite:${senha}@127.0.0.1:3306` },
  );
  expect(r.erros).toBe('');
  expect(r.saida).toContain("giving MYSQL_URL's user a login on the local MariaDB");
  expect(r.log).toContain('mariadb --protocol=socket');
  expect(r.log).not.toContain(senha);
  const entrada = readFileSync(path.join(pasta, 'entrada'), 'utf8');
  expect(entrada).toContain(`CREATE USER 'suite'@'127.0.0.1' IDENTIFIED BY '${senha}'`);
});

test('a MYSQL_URL or REDIS_URL that is no URL (a / in its password, not encoded) stops the script at once, naming the variable, never printing the password', () => {
  for (const [variavel, url] of [
    ['MYSQL_URL', 'mysql://root:Senha/Secreta@127.0.0.1:3306'],
    ['REDIS_URL', 'redis://:Senha#Secreta@127.0.0.1:6379'],
  ]) {
    const r = rodar('echo "não chegou aqui"', { [variavel]: url });
    expect(r.codigo).toBe(1);
    expect(r.erros).toContain(`${variavel} is not a valid URL`);
    expect(r.erros + r.saida).not.toContain('Secreta');
    expect(r.saida).not.toContain('não chegou aqui');
  }
});

test("a step that needs root, without root or sudo, is named by its command, not by `env` before it", () => {
  rmSync(path.join(pasta, 'bin', 'sudo'));
  rmSync(path.join(pasta, 'bin', 'id'));
  falso('id', 'echo 1000');
  const r = rodar('as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y redis-server');
  expect(r.erros).toContain('some steps need root (apt-get first)');
});

test('sudo that asks for a password, with no terminal to type it on (CI): a step that needs root fails at once, saying what to do, and sudo never prompts nor runs the step', () => {
  falso('sudo', '[ "$1" = -n ] && { echo "sudo: a password is required" >&2; exit 1; }; echo "prompted" >>"$PASTA/log"; exit 1');
  rmSync(path.join(pasta, 'bin', 'id'));
  falso('id', 'echo 1000');
  // a session of its own: no controlling terminal, whatever runs the tests
  const r = rodar('as_root apt-get install -y redis-server || echo "rc=$?"; as_root service redis-server start || echo "rc=$?"', {}, true);
  expect(r.saida).toBe('rc=1\nrc=1\n');
  expect(r.log).not.toContain('prompted');
  expect(r.log).not.toContain('apt-get');
  // said once, naming the first step
  expect(r.erros.match(/some steps need root/g)).toHaveLength(1);
  expect(r.erros).toContain('some steps need root (apt-get first) and sudo asks for a password, with no terminal here to type it on: run sudo -v first');
});

test("an account with a password of its own is seen wherever MariaDB keeps it: as the first method or among the alternatives of `auth_or` (the script then never changes it)", async () => {
  const banco = await createConnection(servidorDaUrl(config().mysqlUrl));
  const [[{ versao }]] = (await banco.query('SELECT VERSION() AS versao')) as unknown as [[{ versao: string }]];
  if (!/MariaDB/i.test(versao)) return void (await banco.end()); // the script gives logins on MariaDB only
  const prefixo = `${process.env.DB_PREFIX}_conta`;
  const [[{ ed }]] = (await banco.query("SELECT COUNT(*) AS ed FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'ed25519'")) as unknown as [[{ ed: number }]];
  const instalouEd25519 = Number(ed) === 0 && (await banco.query("INSTALL SONAME 'auth_ed25519'").then(() => true, () => false));
  const contas: [string, string, number][] = [
    // Debian's own root: a password no one has, or the socket
    ['debian', "VIA mysql_native_password USING 'invalid' OR unix_socket", 0],
    ['socket', 'VIA unix_socket', 0],
    ['socket_ou_senha', "VIA unix_socket OR mysql_native_password USING PASSWORD('x')", 1],
    ['vazia', "BY ''", 1],
    ...(Number(ed) > 0 || instalouEd25519 ? [['ed25519_ou_socket', "VIA ed25519 USING PASSWORD('x') OR unix_socket", 1] as [string, string, number]] : []),
  ];
  try {
    for (const [nome, como, esperado] of contas) {
      await banco.query(`CREATE USER '${prefixo}_${nome}'@'localhost' IDENTIFIED ${como}`);
      const sql = execFileSync(onde.bash, ['-c', `source "${SCRIPT}"\nsql_contas_com_senha "'${prefixo}_${nome}'"`], { encoding: 'utf8', env: process.env });
      const [[linha]] = (await banco.query(sql)) as unknown as [[Record<string, number>]];
      expect([nome, Number(Object.values(linha)[0])]).toEqual([nome, esperado]);
    }
  } finally {
    for (const [nome] of contas) await banco.query(`DROP USER IF EXISTS '${prefixo}_${nome}'@'localhost'`);
    if (instalouEd25519) await banco.query("UNINSTALL SONAME 'auth_ed25519'");
    await banco.end();
  }
});
