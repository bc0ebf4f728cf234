#!/usr/bin/env python3
"""Replays the budget calls of a live run against a scratch redis-server and reports what they cost it (issue 19).

What it answers: how much redis-server CPU the senders' EVALSHA calls cost per call and per granted message, on a
server that does nothing else, at the pace they came (or back to back), with budget.lua or any other script. That
separates the script's own cost from the machine the benchmark shares (many-bots runs broker, Redis, FakeTelegram
and three JVMs on the same cores), and it A/B-tests a change to budget.lua in seconds instead of a 9-minute run.

  1. capture (while `java -jar bench/target/sluice-bench.jar many-bots ...` is in its window; the bench's
     redis-server is the child of the bench JVM, its port in its command line):
       scripts/redis-script-replay.py capture --port <bench redis port> --seconds 4 --out calls.monitor
  2. replay (starts its own redis-server from the PATH on a free port for every round, stops it by its PID):
       scripts/redis-script-replay.py replay calls.monitor [--script F.lua] [--unpaced] [--rounds 3]
         [--preload-marks 1000000]

The capture is MONITOR's text (every command of the server, the scripts' own calls tagged "[0 lua]"); only client
EVALSHA calls are replayed, each with the sha of the script the replay loads. Time inside budget.lua comes from the
server's TIME, so only a paced replay (each call at its captured offset, one connection, a call's reply read before
the next is sent) makes the decisions the live server made: the report compares the replay's script-internal SETs
with the capture's and warns when they differ by more than 2 % (back to back, most candidates are refused and the
replay measures a cheaper path). Granted messages are the capture's SETs of chat keys (one per grant).

Before the calls a round writes --preload-marks sent marks (sluice:{bot-N}:sent:..., DONE values, 1 h TTL), so the
keyspace is about the size a running deployment holds (rate x the marks' TTL); lookups in a large keyspace miss the
CPU caches, and a small one would flatter the script.

Standard library only. Never points at a server it did not start, except `capture`, which only reads (MONITOR).
"""
import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

MONITOR_LINE = re.compile(r'^(\d+\.\d+) \[\d+ ([^\]]+)\] (.*)$')


def parse_args_repr(s):
    """The arguments of one MONITOR line, unquoted (MONITOR writes each as a quoted, escaped string)."""
    out, i, n = [], 0, len(s)
    while i < n:
        if s[i] != '"':
            i += 1
            continue
        i += 1
        b = bytearray()
        while s[i] != '"':
            c = s[i]
            if c == '\\':
                d = s[i + 1]
                if d == 'x':
                    b.append(int(s[i + 2:i + 4], 16))
                    i += 4
                    continue
                b += {'n': b'\n', 'r': b'\r', 't': b'\t', 'a': b'\a', 'b': b'\b'}.get(d, d.encode())
                i += 2
                continue
            b += c.encode('utf-8')
            i += 1
        out.append(bytes(b))
        i += 1
    return out


def resp(args):
    return b'*%d\r\n' % len(args) + b''.join(b'$%d\r\n%s\r\n' % (len(a), a) for a in args)


class Conn:
    """One RESP connection; replies are read and discarded, errors counted."""

    def __init__(self, port):
        self.sock = socket.create_connection(('127.0.0.1', port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.file = self.sock.makefile('rb')
        self.errors = 0
        self.first_error = None

    def call(self, *args):
        self.sock.sendall(resp([a if isinstance(a, bytes) else str(a).encode() for a in args]))
        return self.read()

    def read(self):
        line = self.file.readline()
        kind, rest = line[:1], line[1:-2]
        if kind == b'+' or kind == b':':
            return rest
        if kind == b'-':
            self.errors += 1
            self.first_error = self.first_error or rest.decode(errors='replace')
            return None
        if kind == b'$':
            n = int(rest)
            return None if n < 0 else self.file.read(n + 2)[:-2]
        if kind == b'*':
            return [self.read() for _ in range(max(0, int(rest)))]
        raise RuntimeError('unexpected reply %r' % line)

    def close(self):
        self.sock.close()


def info(conn, section):
    text = conn.call('INFO', section).decode()
    return dict(l.split(':', 1) for l in text.splitlines() if ':' in l)


def server_cpu_s(conn):
    i = info(conn, 'cpu')
    return float(i['used_cpu_user']) + float(i['used_cpu_sys'])


def command_calls(conn):
    out = {}
    for k, v in info(conn, 'commandstats').items():
        calls = int(v.split(',')[0].split('=')[1])
        usec = int(v.split(',')[1].split('=')[1])
        out[k.replace('cmdstat_', '')] = (calls, usec)
    return out


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def start_scratch_server(workdir):
    exe = shutil.which('redis-server')
    if exe is None:
        sys.exit('redis-server is not on the PATH (Debian: apt-get install redis-server)')
    port = free_port()
    log = open(os.path.join(workdir, 'redis-%d.log' % port), 'w')
    proc = subprocess.Popen([exe, '--port', str(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
                             '--dir', workdir], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 10
    while True:
        try:
            conn = Conn(port)
            if conn.call('PING') == b'PONG':
                return proc, port, conn
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            sys.exit('the scratch redis-server did not come up on port %d (see %s)' % (port, log.name))
        time.sleep(0.05)


def preload(conn, n):
    base_ms = int(time.time() * 1000)
    batch = []
    for i in range(n):
        batch.append(resp([b'SET', b'sluice:{bot-%d}:sent:preload-%d' % (i % 200, i),
                           b'DONE|||%d|%d' % (base_ms + i, 100000 + i % 60), b'PX', b'3600000']))
        if len(batch) == 10_000 or i == n - 1:
            conn.sock.sendall(b''.join(batch))
            for _ in batch:
                conn.read()
            batch = []


def read_capture(path):
    calls, lua_sets, chat_sets = [], 0, 0
    if not os.path.isfile(path):
        sys.exit('capture %s: no such file' % path)
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            m = MONITOR_LINE.match(line.rstrip('\n'))
            if not m:
                continue
            at, who, rest = float(m.group(1)), m.group(2), m.group(3)
            if who == 'lua':
                if rest.startswith('"SET"'):
                    lua_sets += 1
                    if re.match(r'"SET" "sluice:\{[^}]*\}:chat:', rest):
                        chat_sets += 1
            elif rest.startswith('"EVALSHA"') or rest.startswith('"evalsha"'):
                calls.append((at, parse_args_repr(rest)))
    if not calls:
        sys.exit('%s holds no client EVALSHA call (a MONITOR capture of the bench\'s redis-server?)' % path)
    return calls, lua_sets, chat_sets


def replay_round(calls, script, marks, paced, workdir):
    proc, port, conn = start_scratch_server(workdir)
    try:
        preload(conn, marks)
        sha = conn.call('SCRIPT', 'LOAD', script)
        conn.call('CONFIG', 'RESETSTAT')
        time.sleep(1)  # let the preload's writes settle (lazy expiry, rehashing steps) before measuring
        cpu0 = server_cpu_s(conn)
        t0, start, most_late = calls[0][0], time.time(), 0.0
        if paced:
            for at, args in calls:
                wait = start + (at - t0) - time.time()
                if wait > 0:
                    time.sleep(wait)
                else:
                    most_late = max(most_late, -wait)
                conn.call(args[0], sha, *args[2:])
        else:
            payload = [resp([args[0], sha] + args[2:]) for _, args in calls]
            for k in range(0, len(payload), 64):
                chunk = payload[k:k + 64]
                conn.sock.sendall(b''.join(chunk))
                for _ in chunk:
                    conn.read()
        took = time.time() - start
        cpu1 = server_cpu_s(conn)
        stats = command_calls(conn)
        return {'cpu_s': cpu1 - cpu0, 'took_s': took, 'most_late_ms': most_late * 1000, 'stats': stats,
                'errors': conn.errors, 'first_error': conn.first_error}
    finally:
        conn.close()
        proc.terminate()
        proc.wait(timeout=10)


def cmd_capture(a):
    exe = shutil.which('redis-cli')
    if exe is None:
        sys.exit('redis-cli is not on the PATH')
    with open(a.out, 'w') as out:
        p = subprocess.Popen([exe, '-h', a.host, '-p', str(a.port), 'MONITOR'], stdout=out)
        time.sleep(a.seconds)
        p.terminate()
        p.wait(timeout=10)
    calls, lua_sets, chat_sets = read_capture(a.out)
    print('captured %d EVALSHA calls in %.1f s (%d script-internal SETs, %d grants) into %s'
          % (len(calls), calls[-1][0] - calls[0][0], lua_sets, chat_sets, a.out))


def cmd_replay(a):
    calls, lua_sets, grants = read_capture(a.capture)
    if not os.path.isfile(a.script):
        sys.exit('--script %s: no such file' % a.script)
    with open(a.script, 'rb') as f:
        script = f.read()
    span = calls[-1][0] - calls[0][0]
    print('capture %s: %d EVALSHA calls over %.2f s (%.0f/s), %d script-internal SETs, %d grants (%.2f per call)'
          % (a.capture, len(calls), span, len(calls) / max(span, 1e-9), lua_sets, grants, grants / len(calls)))
    print('script %s, %s, %d preloaded marks per round' % (a.script, 'back to back' if a.unpaced else 'paced', a.preload_marks))
    print('| round | redis-server CPU us per call | per grant | EVALSHA us per call (commandstats) | SETs in the '
          'script (capture %d) | MGET us per call | replay took s | most late ms |' % lua_sets)
    print('|---|---|---|---|---|---|---|---|')
    workdir = tempfile.mkdtemp(prefix='sluice-replay-')
    try:
        for r in range(1, a.rounds + 1):
            res = replay_round(calls, script, a.preload_marks, not a.unpaced, workdir)
            if res['errors']:
                sys.exit('round %d: %d calls failed, the first: %s' % (r, res['errors'], res['first_error']))
            st = res['stats']
            ev_calls, ev_us = st.get('evalsha', (0, 0))
            sets = st.get('set', (0, 0))[0]
            mget_calls, mget_us = st.get('mget', (0, 0))
            per_call = res['cpu_s'] * 1e6 / len(calls)
            per_grant = res['cpu_s'] * 1e6 / grants if grants else float('nan')
            print('| %d | %.1f | %.1f | %.1f | %d | %.1f | %.2f | %.1f |'
                  % (r, per_call, per_grant, ev_us / max(ev_calls, 1), sets, mget_us / max(mget_calls, 1),
                     res['took_s'], res['most_late_ms']))
            if lua_sets and abs(sets - lua_sets) > 0.02 * lua_sets:
                why = ('back to back' if a.unpaced else 'another script, which may write less by design'
                       if os.path.abspath(a.script) != os.path.abspath(default_script()) else 'did pacing fall behind?')
                print('  round %d: the replay made %d SETs, the live server %d: the decisions or the writes differ '
                      '(%s)' % (r, sets, lua_sets, why))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def default_script():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, '..', 'sender', 'src', 'main', 'resources', 'dev', 'sluice', 'sender',
                                         'budget', 'budget.lua'))


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    sub = p.add_subparsers(dest='cmd', required=True)
    c = sub.add_parser('capture', help='MONITOR a redis-server for a while into a file')
    c.add_argument('--host', default='127.0.0.1')
    c.add_argument('--port', type=int, required=True)
    c.add_argument('--seconds', type=float, default=4.0)
    c.add_argument('--out', required=True)
    r = sub.add_parser('replay', help='replay a capture\'s EVALSHA calls against scratch redis-servers')
    r.add_argument('capture')
    r.add_argument('--script', default=default_script(), help='the script to load (default budget.lua)')
    r.add_argument('--unpaced', action='store_true', help='back to back, 64 calls per write (decisions differ)')
    r.add_argument('--rounds', type=int, default=3)
    r.add_argument('--preload-marks', type=int, default=1_000_000)
    a = p.parse_args()
    if a.cmd == 'capture':
        if a.seconds <= 0:
            sys.exit('--seconds %s: expected > 0' % a.seconds)
        cmd_capture(a)
    else:
        if a.rounds < 1:
            sys.exit('--rounds %d: expected at least 1' % a.rounds)
        if a.preload_marks < 0:
            sys.exit('--preload-marks %d: expected >= 0' % a.preload_marks)
        cmd_replay(a)


if __name__ == '__main__':
    main()
