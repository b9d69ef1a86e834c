#!/usr/bin/env bash
# Makes sure MariaDB/MySQL and Redis answer at the addresses of MYSQL_URL and REDIS_URL (defaults:
# 127.0.0.1:3306 and 127.0.0.1:6379). When a local one is not answering it is started, and when it
# is not installed it is installed from Debian packages (mariadb-server, redis-server); a local
# MariaDB also gets its Mroonga engine (below). Remote addresses are only checked. Idempotent: a
# second run does nothing. Sourced, it only defines its functions (test/shared/ensure-services.test.ts).
set -euo pipefail

MYSQL_URL="${MYSQL_URL:-mysql://root@127.0.0.1:3306}"
REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"

# URLs, which may hold a password, reach node through its environment: its command line is
# visible to every user of the machine (ps)
hostport() { # URL default-port name -> "host port socket" (socket: the URL's socketPath, or -)
  URL_DO_SERVICO="$1" node -e '
    let u;
    // uncaught, the error would print the URL, password and all
    try { u = new URL(process.env.URL_DO_SERVICO); } catch {
      console.error(`${process.argv[2]} is not a valid URL (a / # ? or @ in its password must be percent-encoded)`);
      process.exit(1);
    }
    process.stdout.write((u.hostname.replace(/^\[|\]$/g, "") || "127.0.0.1") + " " + (u.port || process.argv[1]) + " " +
      (u.searchParams.get("socketPath") || "-"));
  ' "$2" "$3"
}
# assigned first: a failed command substitution stops the script here (set -e), not inside a read
mysql_alvo="$(hostport "$MYSQL_URL" 3306 MYSQL_URL)"
redis_alvo="$(hostport "$REDIS_URL" 6379 REDIS_URL)"
read -r MYSQL_HOST MYSQL_PORT MYSQL_SOCKET <<<"$mysql_alvo"
read -r REDIS_HOST REDIS_PORT _ <<<"$redis_alvo"

answers() { # host port [socket]: the Unix socket when one is named, else TCP
  node -e '
    const alvo = process.argv[3] && process.argv[3] !== "-" ? { path: process.argv[3] } : { host: process.argv[1], port: Number(process.argv[2]) };
    const s = require("net").connect(alvo);
    s.setTimeout(1500, () => process.exit(1));
    s.on("connect", () => process.exit(0));
    s.on("error", () => process.exit(1));
  ' "$1" "$2" "${3:--}"
}
is_local() { [[ "$1" == "127.0.0.1" || "$1" == "localhost" || "$1" == "::1" ]]; }
# root, or sudo: without a password, or with one typed on the terminal of this run (`npm start` from a
# shell: sudo asks on the terminal, not on stdin); a run without a terminal (CI) never waits for a
# password, and fails at once saying why. A password refused is not asked again by the same shell
# (a step run in a subshell, `$(...)`, may ask once more: sudo itself stops after three tries).
sem_sudo_dito=0
sudo_recusado=0
pode_usar_sudo() {
  command -v sudo >/dev/null || return 1
  sudo -n true 2>/dev/null && return 0
  [ "$sudo_recusado" = 0 ] && { : </dev/tty; } 2>/dev/null && sudo -v && return 0
  sudo_recusado=1
  return 1
}
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; return; fi
  if ! pode_usar_sudo; then
    # said once: a run may try several steps as root before one it cannot do without
    local passo # the command, past `env` and its assignments
    for passo in "$@"; do [[ "$passo" == env || "$passo" == *=* ]] || break; done
    if [ "$sem_sudo_dito" = 0 ]; then
      if command -v sudo >/dev/null; then
        echo "some steps need root ($passo first) and sudo asks for a password, with no terminal here to type it on: run sudo -v first, then this command again (or run it as root)" >&2
      else
        echo "some steps need root ($passo first): run as root, or install sudo" >&2
      fi
    fi
    sem_sudo_dito=1
    return 1
  fi
  sudo -n "$@"
}

answers_within() { # seconds host port [socket]
  for _ in $(seq 1 "$1"); do
    answers "$2" "$3" "${4:--}" && return 0
    sleep 1
  done
  return 1
}
wait_for() { # name host port [socket]
  answers_within 60 "$2" "$3" "${4:--}" && return 0
  echo "$1 did not start on $(where "$2" "$3" "${4:--}")" >&2
  return 1
}
where() { # host port [socket] -> what was checked ([::1]:3306, as in a URL)
  if [ "${3:--}" != "-" ]; then echo "$3"; elif [[ "$1" == *:* ]]; then echo "[$1]:$2"; else echo "$1:$2"; fi
}

apt_updated=0
apt_install() {
  command -v apt-get >/dev/null || { echo "no apt-get: install $* yourself" >&2; exit 1; }
  # another apt at work (a fresh machine's automatic upgrades) is waited for, not failed on: the
  # install's dpkg lock by apt itself, the package lists' lock (which that option does not cover)
  # by trying again while apt says it is held
  if [ "$apt_updated" = 0 ]; then
    local erros tentativa
    for tentativa in $(seq 1 30); do
      # in English whatever the locale: the lock's message is matched below
      erros="$(as_root env LC_ALL=C apt-get update -qq 2>&1 >/dev/null)" && break
      if [[ "$erros" != *"Could not get lock"* ]] || [ "$tentativa" = 30 ]; then echo "$erros" >&2; return 1; fi
      [ "$tentativa" = 1 ] && echo "apt is busy (another apt-get, the automatic upgrades): waiting for it" >&2
      sleep 10
    done
    apt_updated=1
  fi
  # a configuration file changed here before (redis.conf by CONFIG REWRITE) is kept, without the
  # question dpkg would otherwise ask on a terminal nobody sees
  as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 -o Dpkg::Options::=--force-confdef \
    -o Dpkg::Options::=--force-confold install -y -qq "$@" >/dev/null </dev/null
}

# A service of the system's that the script starts rather than run a server of its own beside it:
# systemd runs the machine (in a container nothing would start it) and the unit is enabled (one an
# operator disabled or masked is left alone)
servico_do_sistema() { # unit
  [ -d /run/systemd/system ] && command -v systemctl >/dev/null && systemctl is-enabled --quiet "$1" 2>/dev/null
}

mariadbd_path=/usr/sbin/mariadbd
# The system's MariaDB service answers where MYSQL_URL asks (Debian's listens on 127.0.0.1:3306)
mariadb_do_sistema() { [ "$MYSQL_PORT" = 3306 ] && [ "$MYSQL_HOST" != "::1" ] && [ "$MYSQL_SOCKET" = "-" ] && servico_do_sistema mariadb; }
ensure_mariadb() {
  answers "$MYSQL_HOST" "$MYSQL_PORT" "$MYSQL_SOCKET" && return 0
  is_local "$MYSQL_HOST" || { echo "MySQL/MariaDB at $(where "$MYSQL_HOST" "$MYSQL_PORT" "$MYSQL_SOCKET") does not answer" >&2; exit 1; }
  # by path too: an ordinary user's PATH has no /usr/sbin, and apt would replace a MySQL it did not see
  if ! command -v mariadbd >/dev/null && [ ! -x "$mariadbd_path" ] && ! command -v mysqld >/dev/null && [ ! -x /usr/sbin/mysqld ]; then
    echo "installing MariaDB (Debian package mariadb-server)"
    apt_install mariadb-server
    # on a machine with systemd the package starts its own server: a second one would only fail
    # on the data folder's locks (in a container nothing starts it, and those seconds are lost once)
    answers_within 5 "$MYSQL_HOST" "$MYSQL_PORT" "$MYSQL_SOCKET" && return 0
  fi
  # Debian's own service, installed before and stopped since (for a backup, say): started, not
  # bypassed by a bare server outside systemd, which the service would then fail to start beside
  # (the data folder's locks) and which a package upgrade would not restart
  if mariadb_do_sistema; then
    echo "starting MariaDB (the system's mariadb service)"
    as_root service mariadb start && wait_for MariaDB "$MYSQL_HOST" "$MYSQL_PORT" "$MYSQL_SOCKET" && return 0
    echo "the system's mariadb service, enabled, did not start: start it (see journalctl -u mariadb), or disable it for this script to start a server of its own" >&2
    exit 1
  fi
  echo "starting MariaDB"
  as_root mkdir -p /run/mysqld && as_root chown mysql:mysql /run/mysqld 2>/dev/null || true
  # Debian's configuration binds 127.0.0.1 only: a server for [::1] must be told so
  # a buffer pool that holds what the lookups read often: with the default 128 MB, CNPJ lookups
  # over a million establishments read pages from disk and answered at about half the rate
  # (docs/desempenho.md); the memory is taken as pages are read, not at the start
  local server_args=(--innodb-buffer-pool-size=1G)
  [ "$MYSQL_HOST" = "::1" ] && server_args+=(--bind-address=::1)
  # the socket MYSQL_URL names, when it names one (its folder must exist and be the server's)
  if [ "$MYSQL_SOCKET" != "-" ]; then
    # a folder made here is given to the server; an existing one (/tmp, say) is never changed
    if [ ! -d "$(dirname "$MYSQL_SOCKET")" ]; then
      as_root mkdir -p "$(dirname "$MYSQL_SOCKET")" && as_root chown mysql:mysql "$(dirname "$MYSQL_SOCKET")" 2>/dev/null || true
    fi
    server_args+=(--socket="$MYSQL_SOCKET")
  fi
  # the system's service listens where its own configuration says (127.0.0.1:3306 on Debian),
  # whatever MYSQL_URL asks
  local por_servico=0 mariadb_log="/run/mysqld/suite-$MYSQL_PORT.err"
  if [ -x "$mariadbd_path" ]; then
    # matched by a pid file of this port's own: any other mariadbd (a container's, another port's)
    # is no reason not to start
    # --oknodo: one this script started before, still starting, is waited for below; its errors go
    # to a log of its own, shown if it does not come up
    as_root start-stop-daemon --start --oknodo --background --pidfile "/run/mysqld/suite-$MYSQL_PORT.pid" --make-pidfile \
      --exec "$mariadbd_path" -- --user=mysql --port="$MYSQL_PORT" --log-error="$mariadb_log" "${server_args[@]}" \
      || { por_servico=1; as_root service mariadb start; }
  else
    por_servico=1
    as_root service mysql start
  fi
  wait_for MariaDB "$MYSQL_HOST" "$MYSQL_PORT" "$MYSQL_SOCKET" || {
    [ "$por_servico" = 1 ] || as_root tail -n 15 "$mariadb_log" >&2 || true
    if [ "$por_servico" = 1 ] && { [ "$MYSQL_PORT" != 3306 ] || [ "$MYSQL_HOST" = "::1" ] || [ "$MYSQL_SOCKET" != "-" ]; }; then
      echo "(the system's MariaDB service was started, and it listens where its configuration says, 127.0.0.1:3306 on Debian, not at $(where "$MYSQL_HOST" "$MYSQL_PORT" "$MYSQL_SOCKET"): set MYSQL_URL to its address, or its bind-address and port to MYSQL_URL's)" >&2
    else
      echo "(a MariaDB already running on this machine, on another address, holds the data folder: set MYSQL_URL to its address)" >&2
    fi
    exit 1
  }
}

# The system's Redis service answers where REDIS_URL asks (Debian's listens on 6379 of loopback)
redis_do_sistema() { [ "$REDIS_PORT" = 6379 ] && servico_do_sistema redis-server; }

ensure_redis() {
  answers "$REDIS_HOST" "$REDIS_PORT" && return 0
  is_local "$REDIS_HOST" || { echo "Redis at $(where "$REDIS_HOST" "$REDIS_PORT") does not answer" >&2; exit 1; }
  if ! command -v redis-server >/dev/null; then
    echo "installing Redis (Debian package redis-server)"
    apt_install redis-server
    # Outside containers the package starts Debian's own service, on its port (6379), with
    # snapshots and no append-only file; the server below would then exit at once, its port taken,
    # leaving that one in use. It is kept (the system starts it at boot) and given the settings
    # below, in its configuration file too. The service may take a moment to listen: waited for a
    # few seconds (in a container nothing starts it, and those seconds are lost once, at install).
    if answers_within 5 "$REDIS_HOST" "$REDIS_PORT"; then
      echo "Redis started by its package: turning its append-only file on"
      redis_ok CONFIG SET maxmemory-policy noeviction && redis_ok CONFIG SET appendonly yes && redis_ok CONFIG REWRITE \
        || echo "warning: the Redis of the package kept its own settings: set maxmemory-policy noeviction and appendonly yes in /etc/redis/redis.conf" >&2
      return 0
    fi
  fi
  # Debian's own service, installed before and stopped since (for maintenance, say): started, not
  # replaced by a server of the suite's own, which would hold an empty queue store beside the
  # service's data until the next boot brought that back
  if redis_do_sistema; then
    echo "starting Redis (the system's redis-server service)"
    as_root service redis-server start && wait_for Redis "$REDIS_HOST" "$REDIS_PORT" && return 0
    echo "the system's redis-server service, enabled, did not start: start it (see journalctl -u redis-server), or disable it for the suite to start a Redis of its own" >&2
    return 1
  fi
  echo "starting Redis"
  # BullMQ needs keys never evicted (DESIGN §8); as the calling user (no root needed on a port
  # above 1024); its append-only file in the user's state folder (not the project's: a server
  # started from a checkout outlives it), so queued jobs (a delivery's next attempt) outlive a
  # restart, as in docker-compose.yml
  redis_dir="${XDG_STATE_HOME:-${HOME:-/tmp}/.local/state}/business-services-suite/redis-$REDIS_PORT"
  mkdir -p "$redis_dir"
  redis_bind=127.0.0.1
  [ "$REDIS_HOST" = "::1" ] && redis_bind=::1
  redis-server --daemonize yes --bind "$redis_bind" --port "$REDIS_PORT" --maxmemory-policy noeviction \
    --save "" --appendonly yes --dir "$redis_dir" --logfile "$redis_dir/redis.log"
  wait_for Redis "$REDIS_HOST" "$REDIS_PORT" || { tail -n 15 "$redis_dir/redis.log" >&2 || true; return 1; }
}

# Something answering on Redis's port is not yet a Redis that takes REDIS_URL (a password it
# lacks, protected mode, another program): checked with a PING as the suite connects.
ensure_redis_login() {
  local erro
  erro="$(URL_DO_SERVICO="$REDIS_URL" node -e '
    const Redis = require("ioredis");
    // the first error says why (NOAUTH...); the promise only says the connection closed
    let motivo;
    const r = new Redis(process.env.URL_DO_SERVICO, { lazyConnect: true, connectTimeout: 3000, maxRetriesPerRequest: 0, retryStrategy: () => null });
    // a program that takes the connection and never answers: bounded here, whatever ioredis asks first
    setTimeout(() => { process.stderr.write(motivo ?? "no answer in 5 seconds"); process.exit(1); }, 5000).unref();
    r.on("error", (e) => { motivo ??= e.message; });
    r.connect().then(() => r.ping()).then(
      () => r.disconnect(),
      (e) => { process.stderr.write(motivo ?? e.message); r.disconnect(); process.exitCode = 1; },
    );
  ' 2>&1 >/dev/null)" && return 0
  echo "Redis at $(where "$REDIS_HOST" "$REDIS_PORT") refuses REDIS_URL's connection: $erro" >&2
  return 1
}
# The accounts of a user (given as SQL text) with a way in besides the socket: a password of their
# own (empty counts), as the account's first method or among the alternatives MariaDB keeps apart
# in `auth_or` (`VIA ed25519 USING PASSWORD(...) OR unix_socket` leaves unix_socket first)
sql_contas_com_senha() {
  echo "SELECT COUNT(*) FROM mysql.global_priv g WHERE User = $1 AND (
    (JSON_VALUE(Priv, '\$.plugin') <> 'unix_socket' AND JSON_VALUE(Priv, '\$.authentication_string') <> 'invalid')
    OR EXISTS (SELECT 1 FROM JSON_TABLE(g.Priv, '\$.auth_or[*]' COLUMNS (plugin VARCHAR(64) PATH '\$.plugin',
      senha TEXT PATH '\$.authentication_string')) m WHERE m.plugin <> 'unix_socket' AND COALESCE(m.senha, '') <> 'invalid'))"
}
redis_ok() { [ "$(redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" "$@" 2>&1)" = OK ]; }

sql() { # statement -> first column of the first row, or nothing; connected as the suite connects
  URL_DO_SERVICO="$MYSQL_URL" node -e '
    const mysql = require("mysql2/promise");
    const u = new URL(process.env.URL_DO_SERVICO);
    const servidor = {
      host: u.hostname.replace(/^\[|\]$/g, ""), port: Number(u.port || 3306), user: decodeURIComponent(u.username || "root"),
      password: decodeURIComponent(u.password), socketPath: u.searchParams.get("socketPath") || undefined,
    };
    mysql.createConnection(servidor).then(async (c) => {
      const [linhas] = await c.query(process.argv[1]);
      await c.end();
      const l = linhas && linhas[0];
      process.stdout.write(l ? String(Object.values(l)[0] ?? "") : "");
    }).catch((e) => { process.stderr.write(e.message + "\n"); process.exit(1); });
  ' "$1"
}

# Debian's MariaDB lets its root in only as the system's root, through the Unix socket
# (unix_socket authentication), while the suite connects as MYSQL_URL's user, usually over TCP. On
# a local MariaDB where that account has no way in but the socket (a fresh install), it is given
# the URL's password (empty by default; the server listens on this machine only), through the
# socket as the system's root; root keeps its socket login. A missing user is created for local
# connections. An account that exists with a password of its own is never changed: a wrong
# password in MYSQL_URL stops here, with the server's reason, as does any other refusal.
ensure_login() {
  local erro cliente porta
  erro="$(sql 'SELECT 1' 2>&1 >/dev/null)" && return 0
  if ! is_local "$MYSQL_HOST"; then
    echo "warning: MySQL/MariaDB at $(where "$MYSQL_HOST" "$MYSQL_PORT" "$MYSQL_SOCKET") refuses MYSQL_URL's login: $erro" >&2
    return 0
  fi
  recusa() { echo "MariaDB at $(where "$MYSQL_HOST" "$MYSQL_PORT" "$MYSQL_SOCKET") refuses MYSQL_URL's login ($erro): $1" >&2; return 1; }
  [[ "$erro" == *"Access denied"* ]] || { recusa "check MYSQL_URL"; return 1; }
  cliente="$(command -v mariadb || true)"
  [ -n "$cliente" ] || { recusa "no mariadb client here to give it"; return 1; }
  local socket_args=()
  [ "$MYSQL_SOCKET" != "-" ] && socket_args=(--socket="$MYSQL_SOCKET")
  como_root() { as_root "$cliente" --protocol=socket "${socket_args[@]}" -N "$@"; }
  # the socket (the URL's, or the client's default) must lead to the server of MYSQL_URL's port
  # the client's own error, or sudo's, stays on the screen: it says why better than this script can
  porta="$(como_root -e 'SELECT @@port')" || { recusa "the local socket does not let the system's root in (see above)"; return 1; }
  if [ "$MYSQL_SOCKET" = "-" ] && [ "$porta" != "$MYSQL_PORT" ]; then
    recusa "the local socket leads to the server of port $porta; give the login yourself"
    return 1
  fi
  # the URL's user as it is, and user and password as SQL text (no raw line breaks)
  local usuario usuario_sql senha_sql
  { read -r usuario; read -r usuario_sql; read -r senha_sql; } <<<"$(URL_DO_SERVICO="$MYSQL_URL" node -e '
    const u = new URL(process.env.URL_DO_SERVICO);
    const texto = (s) => `'"'"'${s.replace(/\\/g, "\\\\").replace(/'"'"'/g, "\\'"'"'").replace(/\n/g, "\\n")}'"'"'`;
    const usuario = decodeURIComponent(u.username) || "root";
    process.stdout.write([usuario.replace(/\n/g, " "), texto(usuario), texto(decodeURIComponent(u.password))].join("\n") + "\n");
  ')"
  local com_senha
  com_senha="$(como_root -e "$(sql_contas_com_senha "$usuario_sql")")"
  [ "$com_senha" = 0 ] || { recusa "that account has a password of its own: put it in MYSQL_URL"; return 1; }
  echo "giving MYSQL_URL's user a login on the local MariaDB"
  if [ "$usuario" = root ]; then
    # only a root whose way in is the socket (or nothing) reaches here
    # the statements that carry the password go on stdin: sudo logs a command line whole
    como_root <<<"ALTER USER root@localhost IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD($senha_sql)" \
      || { recusa "giving it failed"; return 1; }
  fi
  local maquinas=(127.0.0.1 ::1) existe
  [ "$usuario" = root ] || maquinas=(localhost 127.0.0.1 ::1)
  for maquina in "${maquinas[@]}"; do
    # a server that skips name resolution sees a TCP client as 127.0.0.1 or ::1, not localhost;
    # rights go only to an account created here
    existe="$(como_root -e "SELECT COUNT(*) FROM mysql.global_priv WHERE User = $usuario_sql AND Host = '$maquina'")"
    [ "$existe" = 0 ] || continue
    como_root <<<"CREATE USER $usuario_sql@'$maquina' IDENTIFIED BY $senha_sql; GRANT ALL PRIVILEGES ON *.* TO $usuario_sql@'$maquina' WITH GRANT OPTION" \
      || { recusa "giving it failed"; return 1; }
  done
  erro="$(sql 'SELECT 1' 2>&1 >/dev/null)" || { echo "MariaDB still refuses MYSQL_URL's login: $erro" >&2; return 1; }
}

# The sales filter's `texto` uses a bigram index where MariaDB has its Mroonga engine, and reads
# the messages otherwise (api/sales/busca-de-texto.ts). On a local MariaDB from Debian packages,
# the engine's package of the same version is installed and the engine loaded. Anything that
# fails here is a warning: the suite works without it, slower on that one search.
has_mroonga() { [ -n "$(sql "SELECT 1 FROM information_schema.ENGINES WHERE ENGINE = 'Mroonga' AND SUPPORT IN ('YES', 'DEFAULT')")" ]; }
# An install that failed because the package of the server's version is not to be had is not
# tried again on every run (each would call apt, maybe sudo): its marker names that version; delete
# it to try again. A transient failure (no network, apt busy) leaves no marker: "not to be had" is
# only believed of package lists just fetched from every source. (apt-get update only warns when a
# source is out of reach, and keeps the lists it had, maybe none: a container's are often removed.)
marca_do_mroonga() { echo "${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/business-services-suite/mroonga-nao-instalado"; }
ensure_mroonga() {
  has_mroonga && return 0
  [[ "$(sql 'SELECT VERSION()')" == *MariaDB* ]] || return 0
  # a server published on a local port from a container (or named for another host) has its own
  # plugin folder: loading the engine is all this script can do for it
  if [[ "$(sql 'SELECT @@hostname')" != "$(cat /proc/sys/kernel/hostname 2>/dev/null || hostname)" ]]; then
    echo "loading MariaDB's Mroonga engine (server in a container or elsewhere)"
    sql "INSTALL SONAME 'ha_mroonga'" >/dev/null && return 0
    echo "MariaDB at $(where "$MYSQL_HOST" "$MYSQL_PORT" "$MYSQL_SOCKET") has no Mroonga plugin: install it where that server runs" >&2
    return 1
  fi
  local dir
  dir="$(sql 'SELECT @@plugin_dir')"
  if [ ! -f "$dir/ha_mroonga.so" ]; then
    local versao marca
    command -v apt-get >/dev/null && versao="$(dpkg-query -W -f='${Version}' mariadb-server 2>/dev/null)" && [ -n "$versao" ] \
      || { echo "MariaDB is not from Debian packages: install its Mroonga plugin yourself" >&2; return 1; }
    marca="$(marca_do_mroonga)"
    if [ "$(cat "$marca" 2>/dev/null)" = "$versao" ]; then
      echo "mariadb-plugin-mroonga=$versao could not be had before; not trying again (delete $marca to retry)" >&2
      return 1
    fi
    if [ "$(id -u)" != 0 ] && ! pode_usar_sudo; then
      echo "installing mariadb-plugin-mroonga needs root: run as root, or run sudo -v first" >&2
      return 1
    fi
    echo "installing MariaDB's Mroonga engine (Debian package mariadb-plugin-mroonga $versao)"
    # the server's own version: another would upgrade (and restart) the server
    if ! apt_install "mariadb-plugin-mroonga=$versao"; then
      if as_root apt-get update -qq -o APT::Update::Error-Mode=any >/dev/null 2>&1 \
        && ! apt-cache show "mariadb-plugin-mroonga=$versao" >/dev/null 2>&1; then
        mkdir -p "$(dirname "$marca")" && echo "$versao" >"$marca"
      fi
      return 1
    fi
    rm -f "$marca"
    # the package may have loaded it itself
    has_mroonga && return 0
  fi
  echo "loading MariaDB's Mroonga engine"
  sql "INSTALL SONAME 'ha_mroonga'" >/dev/null
}

main() {
  # from the project's root, whence its node_modules (mysql2) are found
  cd "$(dirname "$0")/.."
  ensure_mariadb
  ensure_redis
  ensure_redis_login
  ensure_login
  if is_local "$MYSQL_HOST"; then
    ensure_mroonga || echo "warning: no Mroonga engine; the sales text search reads the messages instead" >&2
  fi
  # one line on every run: a MYSQL_URL or REDIS_URL left in the shell from another project is seen
  echo "MySQL/MariaDB at $(where "$MYSQL_HOST" "$MYSQL_PORT" "$MYSQL_SOCKET") (MYSQL_URL), Redis at $(where "$REDIS_HOST" "$REDIS_PORT") (REDIS_URL)" >&2
}
if [ "${BASH_SOURCE[0]}" = "$0" ]; then main "$@"; fi
