-- Sluice shared budget: one atomic decision for a batch of messages of ONE bot (DESIGN.md, Budget).
--
-- Time comes from the Redis server only (TIME, read once), never from clients. All arithmetic is on integers
-- (microseconds, parts per million) held exactly in Lua doubles (< 2^53). Waits are rounded UP to whole
-- milliseconds, so a caller that waits exactly the returned wait passes. Every key written gets a PX TTL of
-- at least its time to refill (an expired key is the same as a full bucket, a lifted gate or a full rate).
-- All keys of a bot share the hash tag {<bot>}, so the script is Redis Cluster safe.
--
-- GCRA (ITU-T I.371): a request at t passes if t >= TAT - tolerance, tolerance = (burst - 1) * interval;
-- then TAT <- max(TAT, t) + interval. TATs and gates are microseconds since the epoch.
--
-- Keys hold packed strings, so a decision reads them all with ONE MGET and writes only what changed:
--   sluice:{b}:bot          "<global TAT>|<bot gate>|<AIMD m ppm>|<AIMD climb start>|<backfill TAT>"
--   sluice:{b}:chat:<id>    "<chat TAT>|<chat gate>"
--   sluice:{b}:group:<id>   "<group TAT>|<group gate>"
--   sluice:{b}:arrivals     "<grant seq>|<seq>:<floor>,<seq>:<floor>,..." (only with the arrival guard, below)
-- (an empty field = absent: a full bucket, no gate, the configured rate). A key's PX TTL is the time until
-- the latest of its fields stops mattering (TAT reached, gate lifted, AIMD multiplier climbed back to 1). The bot
-- gate's field is kept for LIFTED_KEPT_US after it lifts (it refuses nothing then): 'penalize' reads when it lifted.
--
-- op 'acquire'
--   KEYS[1] sluice:{b}:bot
--   KEYS[2..1+P] the sent marks of the pending mark writes (ARGV[17] = P, below): the bot's own and, on one node,
--               any other bot's (sluice:{other}:sent:<id>); on a Redis Cluster only keys of KEYS[1]'s slot
--   then per candidate: sluice:{b}:chat:<id>; for groups also sluice:{b}:group:<id>; with flag 4 or 16 also the
--   sent mark sluice:{b}:sent:<message id> (the idempotency key, see RedisSentMarks)
--   ARGV[2] global interval us at the configured rate   ARGV[3] global burst
--   ARGV[4] chat interval us    ARGV[5] chat tolerance us
--   ARGV[6] group interval us   ARGV[7] group tolerance us (the interval already stretched by
--           budget.group.arrival.margin.ms, BudgetLimits.groupIntervalMicros(long): Telegram counts a group's
--           arrivals in a sliding minute, so 21 grants exactly 60 s apart would be a 429 if the first arrived late)
--   ARGV[8] backfill headroom ppm (share of the global rate reserved for live, 0..999999)
--   ARGV[9] backfill burst      ARGV[10] AIMD additive increase, ppm of the rate per second
--   ARGV[11] reservation horizon us (see flag 8)
--   ARGV[12] arrival guard: the provider's limit N per window (0 = off)   ARGV[13] the window, us
--   ARGV[14] the routine reservation horizon us (see flag 32); -1 = none (routine candidates as urgent ones)
--   ARGV[15] the critical memory us: how long a grant of an urgent candidate (flag 32) keeps the bot's routine
--            candidates on the routine horizon (its key sluice:{b}:critical, the last key but for the probe key, lives that long);
--            0 = routine candidates always use the routine horizon (no key)
--   ARGV[16] the penalty probe window us (0 = off): after the bot's gate lifts, the first candidate granted is the
--            probe, and the bot's gate closes again behind it until the probe's slot + this window (below)
--   ARGV[17] P, the number of pending sent-mark writes riding on this call (see op 'marks')
--   ARGV[18] the sent marks' PX TTL, ms (these and the in-flight marks)   ARGV[19..18+P] their values; KEYS[2..1+P] their keys sluice:{b}:sent:<id>, written
--            (SET ... PX ARGV[18]) before any candidate is decided, whatever the decision
--   ARGV[19+P..] per candidate its flags: 1 = backfill lane, 2 = group, 4 = check the sent mark,
--              8 = may reserve, 16 = write the in-flight mark on a grant, 32 = urgent (bits); with 16 the next ARGV is that mark's
--              value ("FLIGHT|||<at ms>|<result key>"), SET with PX ARGV[18] when (and only when) the candidate is
--              granted, reservations included: a sender killed after the grant leaves the mark, and the message's
--              next owner looks for its result before sending it (RedisSentMarks, Outcomes.replay);
--              64 = exclusive (with 16; then the ARGV after the mark's value is settled_from, ms): a stored mark of
--              another result key (another chat) is answered ALREADY_SENT instead of a grant, so two chats' messages
--              with one id are never both granted, whichever read first; and so is a settled mark (SENT, DONE) of its
--              own key written at or after settled_from (0: any; a replay passes its sluice.replayed.at, as marks
--              before it are an earlier attempt's), so a copy of a message whose twin was sent after this copy's mark
--              was read is not sent again (a duplicate outbox record, a sender still holding a moved partition)
--   -> {multiplier_ppm, r_1, r_2, ..., short}, one item per candidate: an integer r = wait_ms * 16 + code, code 0
--      granted (wait_ms 0, or the reservation's wait), else the limit that refused: 1 GLOBAL, 2 CHAT, 3 GROUP,
--      4 GATE_CHAT, 5 GATE_GROUP, 6 GATE_BOT, 7 HEADROOM; or a string, the sent mark's value: ALREADY_SENT
--      (code 10), nothing consumed. One integer per candidate keeps the reply small to encode and to parse.
--   The last item, short, is 1 when the bot's routine candidates were held to the routine horizon (a grant of an
--   urgent candidate within the critical memory, this call's included, or a memory of 0), else 0.
--   Candidates are decided in order, each all or nothing: a refused one writes nothing.
--   With the arrival guard on (ARGV[12] = N > 0; its key sluice:{b}:arrivals is the last key, before
--   the critical key) every grant of the
--   bot gets the next grant sequence number, and the reply ends with one more item per candidate: its sequence
--   number (0 when refused). A grant never comes before a floor recorded for its number (op 'late'); it is
--   applied as a raised global TAT: a reservation whose GCRA wait is within the horizon takes the slot at the floor
--   (at most one window later); else a floor refuses with code 1 (GLOBAL).
--   Reservation (flag 8, live only): when no gate is active and the chat and group limits pass now but the
--   global GCRA refuses with a wait w <= ARGV[11], the candidate is granted for the instant now + w instead:
--   code 0 with wait_ms = ceil(w / 1000), and every TAT moves as for an arrival at now + w (the GCRA rule for
--   an arrival at that instant). The caller must not send before the returned wait; sending later is safe.
--   So N replicas asking for one bot's next slots do not collide: each call takes a slot instead of a refusal.
--   Two horizons: an urgent candidate (flag 32: CRITICAL, or the head of a lane holding one) reserves up to
--   ARGV[11]; a routine one too, unless the bot is serving urgent work (short, above): then up to
--   min(ARGV[11], ARGV[14]). Reserved slots are the ones a critical message arriving later waits behind, so a bot
--   that sends critical messages keeps its routine reservations short, and a bot that sends none (every replica
--   sees it in the shared key) keeps the long horizon and its batches (fewer calls per message).
--
--   The penalty probe (ARGV[16] > 0; its key sluice:{b}:probe is the very last key, read only in the second after a
--   bot gate lifted, never in the MGET): when the bot's gate field holds a gate that lifted less than LIFTED_KEPT_US
--   ago and no probe went after it, the first candidate granted (at its slot s) is the probe: the bot's gate closes
--   again until s + window, so every other candidate, of this call and of every replica, is refused with code 6 and
--   no slot is reserved for them meanwhile; the probe key "<that gate's end>" (PX: until that gate's own lifted
--   second ends) says the gate after the probe is not a penalty to probe again. The probe's answer comes within the
--   window: a 429 moves the bot's gate on ('penalize' while a bot gate is up), a 200 lets the others go when the
--   window ends. Without it, the slots every replica takes at the instant the gate lifts all go out before the first
--   call's 429 is known, each one inside the provider's renewed penalty (chaos's bot-429-storm, session 16).
--
--   Effective global interval I = ceil(interval * 10^6 / m) (AIMD). Backfill (headroom h) passes only if
--   (a) the global GCRA would still pass it with a reserve R = ceil(h * burst * I) taken off its tolerance:
--       t >= TAT - tolerance + R, so a live caller waiting its returned wait always comes first, and
--   (b) its own GCRA at rate (1 - h) * r * m (interval ceil(I * 10^6 / (10^6 - h))) with burst ARGV[9],
--       so backfill alone never takes more than (1 - h) of the rate: h of it stays free for live.
--
-- op 'penalize'
--   KEYS[1] the key holding the gate (sluice:{b}:chat:<id>, sluice:{b}:group:<id> or sluice:{b}:bot)
--   KEYS[2] sluice:{b}:bot
--   ARGV[2] 'bot' or 'gate'   ARGV[3] penalty ms   ARGV[4] AIMD decrease factor ppm   ARGV[5] floor ppm
--   ARGV[6] AIMD increase ppm per second
--   KEYS[3] sluice:{b}:recent429 (optional)   ARGV[7] its look-back, ms
--   -> {gate_ms_left, multiplier_ppm}. An existing longer gate is kept. For 'bot', the multiplier is cut
--   (m <- max(floor, m * factor)) only when no bot gate was active (one cut per penalty episode, however
--   many replicas report the same 429); it starts climbing back when the gate lifts. For 'gate' while the
--   bot's gate is up, the bot's gate is extended to the new penalty's end too (Telegram extends a penalty
--   on every call made during it, and this call was). A 'gate' while no bot gate is up is remembered in KEYS[3]
--   ("<end>|<reported at>", the latest-ending one of the look-back): a 'bot' within the look-back takes that end
--   if later by at most the look-back. Such a 429 may have been the same bot-wide penalty, filed for its chat
--   because no replica had yet written the bot's gate, and its call (within the look-back) extended Telegram's
--   penalty; a chat's own, much longer penalty stays its chat's.
--   A chat's 'gate' (KEYS[3] given: not a group's) reported within the look-back after the bot's gate LIFTED is taken
--   as the same bot-wide penalty too: the bot's gate opens again until the new end (no second AIMD cut). The first
--   call after a bot gate is alone, so its sender files its 429 for its chat; when the provider's penalty still ran
--   (a call the gate did not cover extended it), nothing else would keep the bot's other chats out of it, and the
--   next call of any replica would be refused and extend it again (chaos's bot-429-storm, BENCHMARKS.md session 10).
--
-- op 'late' (the arrival guard; a provider that counts arrivals in a sliding window, e.g. Telegram's 30 per second)
--   KEYS[1] sluice:{b}:arrivals   ARGV[2] a grant's sequence number k   ARGV[3] N   ARGV[4] the window, us
--   -> {floor seq, current seq}. The caller got its provider answer late after grant k's slot, so the call may
--   have ARRIVED that late: the grant N after it (k + N, or the next grant if that one is already out) must not
--   come before now + window, now being later than the arrival. Then no N + 1 arrivals share a window, however
--   late the arrival, while the GCRA alone spaces the calls that were answered within the slack.
--
-- op 'marks' (the sent marks no budget call carried within sender.sent.mark.flush.interval.ms)
--   KEYS[1..n] sluice:{b}:sent:<id> (any bots' on one node; on a Redis Cluster those of one slot)   ARGV[2] PX TTL, ms
--   ARGV[3..2+n] the values
--   -> n. Each key is SET to its value with the TTL: a mark "SENT|<status>|<provider id>|<at ms>|<result key>"
--   (the provider accepted, or may have accepted, the message) or "DONE||||<result key>" (its result is acknowledged
--   by Kafka; "DONE||" before the key was kept).
--   A sent mark's life: none -> FLIGHT (written by the grant, op 'acquire' flag 16) -> SENT (after the provider's
--   answer, before the result is acknowledged) -> DONE; a grant not used leaves FLIGHT, which only makes a next owner
--   look for a result before sending.
--   The same writes ride on 'acquire' (ARGV[17..]) when a bot asks for budget before the flush.

-- op 'seed' (after an outage: a recovered empty Redis must not hand out a fresh burst)
--   KEYS[1] sluice:{b}:bot   ARGV[2] global TAT floor, ms from now (>= 0)   ARGV[3] AIMD increase ppm per s
--   -> {global TAT ms from now}. The global TAT becomes at least now + ARGV[2]; nothing else changes.

-- Cost: a decision is TIME and ONE MGET of every key it reads (bot, each candidate's chat[, group][, sent mark], the
-- arrivals key, the critical key), after the pending sent-mark writes it carries (one SET each); a refusal writes nothing else, and a
-- grant writes each key it changed once (and its in-flight mark) (the chat/group key at once, the bot key once per
-- call). One message granted: TIME, MGET, SET chat, SET mark, SET bot (was 9 calls with a GET per key and a SENT). The acquire
-- path below is written out inline, with locals instead of tables and closures: it is the hot path, and in
-- Redis a script's body (including every local function in it) is executed anew on each call.

-- Redis < 5 replicates scripts verbatim and forbids writes after TIME unless effects are replicated.
if redis.replicate_commands then
  redis.replicate_commands()
end

local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2] -- (numeric strings: Lua converts them exactly in arithmetic)
local PPM = 1000000
-- how long a lifted bot gate stays in the bot key (>= RedisGcraBudget.RECENT_429_LOOKBACK, the look-back 'penalize'
-- is given): only 'penalize' reads it then
local LIFTED_KEPT_US = 1000000
local floor = math.floor
local op = ARGV[1]

if op == 'acquire' then
  -- integers sent by the client: "+ 0" converts them like tonumber, without a function call per argument
  local A = ARGV
  local g_base = A[2] + 0
  local g_burst = A[3] + 0
  local c_interval = A[4] + 0
  local c_tolerance = A[5] + 0
  local p_interval = A[6] + 0
  local p_tolerance = A[7] + 0
  local headroom = A[8] + 0
  local inc = A[10] + 0
  local horizon = A[11] + 0
  local guard_n = A[12] + 0
  local routine_horizon = A[14] + 0
  local memory = A[15] + 0
  local probe_window = A[16] + 0

  -- the pending sent-mark writes riding on this call (one SET each, before the decision)
  local marks_n = A[17] + 0
  if marks_n > 0 then
    local ttl = A[18]
    for j = 1, marks_n do
      redis.call('SET', KEYS[1 + j], A[18 + j], 'PX', ttl)
    end
  end

  -- Every key the decision reads, in ONE call (MGET; one hash tag, so Redis Cluster safe), after the pending writes:
  -- the bot, each candidate's chat[, group][, sent mark], then the arrivals key. KEYS[j] (j >= 2 + P) is pre[j - P].
  -- The probe key (the very last, with a probe window) is left out: it is read only in the second after a bot gate.
  local n_keys = #KEYS
  local probe_key = nil
  if probe_window > 0 then
    probe_key = KEYS[n_keys]
    n_keys = n_keys - 1
  end
  local pre
  if marks_n == 0 then
    pre = redis.call('MGET', unpack(KEYS, 1, n_keys))
  else
    pre = redis.call('MGET', KEYS[1], unpack(KEYS, 2 + marks_n, n_keys))
  end
  -- what this call wrote, by key: a batch naming a chat (or a message) twice reads its own earlier write
  local written = {}

  -- the critical memory (ARGV[15] > 0: its key is the last one): routine candidates are held to the routine
  -- horizon while the key lives (a grant of an urgent candidate within the memory), always with a memory of 0
  local last_key = n_keys
  local last_pre = #pre
  local short = true
  local critical_key = nil
  if memory > 0 then
    critical_key = KEYS[last_key]
    short = pre[last_pre] ~= false
    last_key = last_key - 1
    last_pre = last_pre - 1
  end
  local critical_granted = false

  -- the arrival guard (off unless ARGV[12] > 0): the bot's grant sequence number and the floors on later grants
  local guard_key, seq, fl_s, fl_t, seqs = nil, 0, nil, nil, nil
  if guard_n > 0 then
    guard_key = KEYS[last_key]
    fl_s, fl_t, seqs = {}, {}, {}
    local gv = pre[last_pre]
    if gv then
      local bar = string.find(gv, '|', 1, true)
      seq = string.sub(gv, 1, bar - 1) + 0
      for a, b in string.gmatch(string.sub(gv, bar + 1), '(%d+):(%d+)') do
        fl_s[#fl_s + 1] = a + 0
        fl_t[#fl_t + 1] = b + 0
      end
    end
  end

  -- the bot: "<global TAT>|<bot gate>|<AIMD m ppm>|<AIMD climb start>|<backfill TAT>"
  local s_g, s_gate, s_m, s_mt, s_bf
  local v = pre[1]
  if v then
    local p = string.find(v, '||||', 1, true)
    if p and p > 1 and p + 3 == #v then
      -- the common shape: only the global TAT is set
      s_g = string.sub(v, 1, p - 1) + 0
    else
      local a, b, c, d, e = string.match(v, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
      s_g, s_gate, s_m, s_mt, s_bf = tonumber(a), tonumber(b), tonumber(c), tonumber(d), tonumber(e)
    end
  end

  -- the AIMD multiplier now: m climbs additively from instant mt (never above 10^6 = the configured rate)
  local m = PPM
  local g_interval = g_base
  if s_m then
    m = s_m
    if now > s_mt then
      m = m + floor(inc * (now - s_mt) / PPM)
    end
    if m > PPM then
      m = PPM
    end
    -- I = ceil(interval * 10^6 / m)
    local x = g_base * PPM
    g_interval = floor(x / m)
    if g_interval * m < x then g_interval = g_interval + 1 end
  end
  local g_tolerance = (g_burst - 1) * g_interval
  -- backfill parameters, computed on the first backfill candidate only
  local reserve, bf_interval, bf_tolerance = nil, nil, nil

  -- a missing TAT is a bucket idle since long ago (0), not since now: the reserve check needs the raw TAT
  local g_tat = s_g or 0
  local dirty = false

  local bot_gate_wait = 0
  if s_gate and s_gate > now then
    bot_gate_wait = s_gate - now
  end
  -- the penalty probe: the first grant after a bot gate lifted, unless that gate was the one behind a probe
  local probing = false
  if probe_key and s_gate and s_gate <= now and now - s_gate < LIFTED_KEPT_US then
    probing = redis.call('GET', probe_key) ~= string.format('%.0f', s_gate)
  end

  local out = {m}
  local k = 2 + marks_n
  local i = 19 + marks_n
  local n_args = #ARGV
  while i <= n_args do
    local flags = A[i] + 0 -- 0..127, bits tested with % (no function calls)
    i = i + 1
    local backfill = flags % 2 == 1
    local group = flags % 4 >= 2
    local check = flags % 8 >= 4
    local may_reserve = flags % 16 >= 8 and not backfill
    local urgent = flags % 64 >= 32
    local exclusive = flags >= 64
    local flight = nil
    local settled_from = 0
    if flags % 32 >= 16 then
      flight = A[i]
      i = i + 1
      if exclusive then
        settled_from = A[i] + 0
        i = i + 1
      end
    end
    local chat_key = KEYS[k]
    local chat_at = k - marks_n -- its value's index in pre
    k = k + 1
    local group_key = nil
    if group then
      group_key = KEYS[k]
      k = k + 1
    end
    local mark = nil
    local mark_key = nil
    if check or flight then
      mark_key = KEYS[k]
      k = k + 1
      local stored = written[mark_key]
      if stored == nil then stored = pre[k - 1 - marks_n] end
      if check then
        mark = stored
      elseif exclusive and stored then
        -- state, time and result key are the first, fourth and fifth fields (the key is absent in marks of older
        -- versions: no verdict)
        local stored_state, stored_at, stored_key = string.match(stored, '^([^|]*)|[^|]*|[^|]*|([^|]*)|(.+)$')
        if stored_key and stored_key ~= string.match(flight, '^[^|]*|[^|]*|[^|]*|[^|]*|(.+)$') then
          mark = stored -- the id was used for another chat: not granted (Outcomes.replay ends it FAILED)
        elseif stored_key and stored_state ~= 'FLIGHT' then
          local at = tonumber(stored_at)
          if settled_from == 0 or (at and at >= settled_from) then
            mark = stored -- sent (or finished) since this copy read the mark: not again (Outcomes.replay)
          end
        end
      end
    end
    if mark then
      -- already sent (a redelivery): not sent again, nothing consumed
      out[#out + 1] = mark
    else
      -- "<TAT>|<gate>" (an empty field = absent)
      local c_tat, c_gate, p_tat, p_gate
      v = written[chat_key]
      if v == nil then v = pre[chat_at] end
      if v then
        if #v > 1 and string.byte(v, -1) == 124 then
          -- the common shape "<TAT>|": no gate
          c_tat = string.sub(v, 1, -2) + 0
        else
          local a, b = string.match(v, '^([^|]*)|([^|]*)$')
          c_tat, c_gate = tonumber(a), tonumber(b)
        end
      end
      if group then
        v = written[group_key]
        if v == nil then v = pre[chat_at + 1] end
        if v then
          if #v > 1 and string.byte(v, -1) == 124 then
            p_tat = string.sub(v, 1, -2) + 0
          else
            local a, b = string.match(v, '^([^|]*)|([^|]*)$')
            p_tat, p_gate = tonumber(a), tonumber(b)
          end
        end
      end

      -- 1. penalty gates: the longest active one refuses
      local code, wait = 0, 0
      if bot_gate_wait > 0 then
        code, wait = 6, bot_gate_wait
      end
      if p_gate and p_gate - now > wait then
        code, wait = 5, p_gate - now
      end
      if c_gate and c_gate - now > wait then
        code, wait = 4, c_gate - now
      end

      -- 2. the GCRAs, all evaluated before anything is written: all or nothing. A GCRA with TAT x and
      -- tolerance y passes at t >= x - y; its wait is x - y - now when positive (TATs taken at least now).
      local c_now = c_tat
      if c_now == nil or c_now < now then c_now = now end
      local p_now = p_tat
      if p_now == nil or p_now < now then p_now = now end
      local g_now = g_tat
      if g_now < now then g_now = now end
      -- the reservation horizon bounds the GCRA's own wait; a guard floor may take the slot up to a window further
      local g_own_wait = g_now - g_tolerance - now
      if fl_s then
        -- the arrival guard: this grant (number seq + 1) not before its floor, as an arrival at the floor would
        local f = 0
        for j = 1, #fl_s do
          if fl_s[j] <= seq + 1 and fl_t[j] > f then f = fl_t[j] end
        end
        if f + g_tolerance > g_now then g_now = f + g_tolerance end
      end
      local bf_now = nil
      local send_at = now
      if code == 0 then
        local w = c_now - c_tolerance - now
        if w > wait then code, wait = 2, w end
        if group then
          w = p_now - p_tolerance - now
          if w > wait then code, wait = 3, w end
        end
        w = g_now - g_tolerance - now
        if w < 0 then w = 0 end
        local h = horizon
        if short and not urgent and routine_horizon >= 0 and routine_horizon < h then h = routine_horizon end
        if w > 0 and code == 0 and may_reserve and g_own_wait <= h then
          -- only the global limit refuses, and soon enough: take that slot now (an arrival at now + w)
          send_at = now + w
          if c_now < send_at then c_now = send_at end
          if p_now < send_at then p_now = send_at end
          w = 0
        end
        if w > wait then code, wait = 1, w end
        if backfill and headroom > 0 and w == 0 then
          if reserve == nil then
            reserve = headroom * g_burst * g_interval
            reserve = floor(reserve / PPM) + ((floor(reserve / PPM) * PPM < reserve) and 1 or 0)
            local x = g_interval * PPM
            bf_interval = floor(x / (PPM - headroom))
            if bf_interval * (PPM - headroom) < x then bf_interval = bf_interval + 1 end
            bf_tolerance = (tonumber(ARGV[9]) - 1) * bf_interval
          end
          -- (a) the reserve on the shared TAT, (b) the backfill lane's own rate
          local hw = g_tat - (g_tolerance - reserve) - now
          bf_now = s_bf
          if bf_now == nil or bf_now < now then bf_now = now end
          local bw = bf_now - bf_tolerance - now
          if bw > hw then hw = bw end
          if hw > wait then code, wait = 7, hw end
        end
      end

      if code == 0 then
        g_tat = g_now + g_interval
        dirty = true
        if seqs then
          seq = seq + 1
          seqs[#seqs + 1] = seq
        end
        if bf_now then
          s_bf = bf_now + bf_interval
        end
        -- each changed key once, with a PX TTL until its TAT is reached or its gate lifts (whichever is later)
        -- (as write_pair: a gate is kept only while it outlasts the TAT; a grant implies no gate is active)
        local tat = c_now + c_interval
        local last = tat
        if c_gate and c_gate > last then last = c_gate else c_gate = nil end
        local w = string.format('%.0f', tat) .. '|' .. (c_gate and string.format('%.0f', c_gate) or '')
        redis.call('SET', chat_key, w, 'PX', floor((last - now + 999) / 1000))
        written[chat_key] = w
        if group then
          tat = p_now + p_interval
          last = tat
          if p_gate and p_gate > last then last = p_gate else p_gate = nil end
          w = string.format('%.0f', tat) .. '|' .. (p_gate and string.format('%.0f', p_gate) or '')
          redis.call('SET', group_key, w, 'PX', floor((last - now + 999) / 1000))
          written[group_key] = w
        end
        if urgent and not backfill then
          critical_granted = true
          short = true -- the routine candidates after it in this call too
        end
        if flight then
          redis.call('SET', mark_key, flight, 'PX', A[18])
          written[mark_key] = flight
        end
        if probing then
          -- the probe: every other candidate waits for its answer (the gate, written with the bot key below)
          probing = false
          s_gate = send_at + probe_window
          bot_gate_wait = s_gate - now
          redis.call('SET', probe_key, string.format('%.0f', s_gate), 'PX', floor((s_gate + LIFTED_KEPT_US - now + 999) / 1000))
        end
        -- wait_ms * 16 + code 0; waits rounded up to whole ms: x - x % 1000 is exact on integers
        local x = send_at - now + 999
        out[#out + 1] = (x - x % 1000) / 1000 * 16
      else
        local x = wait + 999
        out[#out + 1] = (x - x % 1000) / 1000 * 16 + code
        if seqs then seqs[#seqs + 1] = 0 end
      end
    end
    if seqs and mark then seqs[#seqs + 1] = 0 end
  end

  if seqs then
    for j = 1, #seqs do
      out[#out + 1] = seqs[j]
    end
    if dirty then
      -- the floors not yet reached stay; the key lives 10 minutes after the last grant (a lost key restarts the
      -- numbering: a floor then left behind names a far grant and has long passed when that grant comes)
      local parts = {string.format('%.0f', seq), '|'}
      for j = 1, #fl_s do
        if fl_s[j] > seq then
          parts[#parts + 1] = string.format('%.0f:%.0f,', fl_s[j], fl_t[j])
        end
      end
      redis.call('SET', guard_key, table.concat(parts), 'PX', 600000)
    end
  end

  if dirty then
    -- one SET with a TTL until the latest field stops mattering; the AIMD fields go once m is back at 10^6
    local last = now
    if s_m then
      local x = (PPM - s_m) * PPM
      local climb = floor(x / inc)
      if climb * inc < x then climb = climb + 1 end
      local climbed_at = s_mt + climb
      if climbed_at <= now then
        s_m, s_mt = nil, nil
      elseif climbed_at > last then
        last = climbed_at
      end
    end
    if s_gate and s_gate + LIFTED_KEPT_US <= now then s_gate = nil end
    if g_tat > last then last = g_tat end
    if s_gate and s_gate > last then last = s_gate end
    if s_bf and s_bf > last then last = s_bf end
    if last > now then
      local function fmt(n)
        if n == nil then
          return ''
        end
        return string.format('%.0f', n)
      end
      redis.call('SET', KEYS[1], fmt(g_tat) .. '|' .. fmt(s_gate) .. '|' .. fmt(s_m) .. '|' .. fmt(s_mt) .. '|' .. fmt(s_bf),
          'PX', floor((last - now + 999) / 1000))
    end
  end
  if critical_granted and critical_key then
    redis.call('SET', critical_key, '1', 'PX', floor((memory + 999) / 1000))
    short = true
  end
  out[#out + 1] = short and 1 or 0
  return out
end

-- The rare operations (after a 429, after an outage) share these helpers.

local function ceil_div(a, b)
  local q = floor(a / b)
  if q * b < a then
    q = q + 1
  end
  return q
end

local function ceil_ms(us)
  return ceil_div(us, 1000)
end

local function fmt(n)
  if n == nil then
    return ''
  end
  return string.format('%.0f', n)
end

-- "<tat>|<gate>" -> tat, gate (nil when absent)
local function read_pair(key)
  local v = redis.call('GET', key)
  if not v then
    return nil, nil
  end
  local a, b = string.match(v, '^([^|]*)|([^|]*)$')
  return tonumber(a), tonumber(b)
end

local function write_pair(key, tat, gate)
  local last = now
  if tat and tat > last then last = tat end
  if gate and gate > last then last = gate else gate = nil end
  if last > now then
    redis.call('SET', key, fmt(tat) .. '|' .. fmt(gate), 'PX', ceil_ms(last - now))
  end
end

local function read_bot(key)
  local v = redis.call('GET', key)
  if not v then
    return {}
  end
  local a, b, c, d, e = string.match(v, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
  return {g = tonumber(a), gate = tonumber(b), m = tonumber(c), mt = tonumber(d), bf = tonumber(e)}
end

-- The AIMD multiplier now (as in acquire).
local function multiplier(s, inc)
  if not s.m then
    return PPM
  end
  local m = s.m
  if now > s.mt then
    m = m + math.floor(inc * (now - s.mt) / PPM)
  end
  if m > PPM then
    m = PPM
  end
  return m
end

-- One SET with a TTL until the latest field stops mattering (as in acquire).
local function write_bot(key, s, inc)
  local last = now
  if s.m then
    local climbed_at = s.mt + ceil_div((PPM - s.m) * PPM, inc)
    if climbed_at <= now then
      s.m, s.mt = nil, nil
    elseif climbed_at > last then
      last = climbed_at
    end
  end
  if s.gate and s.gate + LIFTED_KEPT_US <= now then s.gate = nil end
  if s.g and s.g > last then last = s.g end
  if s.gate and s.gate > last then last = s.gate end
  if s.bf and s.bf > last then last = s.bf end
  if last > now then
    redis.call('SET', key, fmt(s.g) .. '|' .. fmt(s.gate) .. '|' .. fmt(s.m) .. '|' .. fmt(s.mt) .. '|' .. fmt(s.bf),
        'PX', ceil_ms(last - now))
  end
end

if op == 'penalize' then
  local until_us = now + tonumber(ARGV[3]) * 1000
  local inc = tonumber(ARGV[6])
  local recent_key = KEYS[3]
  local lookback = tonumber(ARGV[7] or '0') * 1000
  local recent_end, recent_at = nil, nil
  if recent_key then
    local r = redis.call('GET', recent_key)
    if r then
      local e, at = string.match(r, '^(%d+)|(%d+)$')
      recent_end, recent_at = tonumber(e), tonumber(at)
      if not (recent_end and recent_at and now - recent_at <= lookback) then
        recent_end, recent_at = nil, nil
      end
    end
  end
  if ARGV[2] == 'bot' then
    local s = read_bot(KEYS[1])
    local active = s.gate and s.gate > now
    if recent_end and recent_end > until_us and recent_end - until_us <= lookback then
      until_us = recent_end
    end
    if s.gate and s.gate > until_us then
      until_us = s.gate
    end
    s.gate = until_us
    local m = multiplier(s, inc)
    if not active then
      local floor_ppm = tonumber(ARGV[5])
      m = math.floor(m * tonumber(ARGV[4]) / PPM)
      if m < floor_ppm then
        m = floor_ppm
      end
    end
    -- climbing starts when the gate lifts
    s.m, s.mt = m, until_us
    write_bot(KEYS[1], s, inc)
    return {ceil_ms(until_us - now), m}
  end
  local b = read_bot(KEYS[2])
  -- a chat's 429 just after the bot's gate lifted: the first call after it, refused because the provider's
  -- penalty still ran (see the header); a group's 429 (no KEYS[3]) can be its own 20 per minute, and stays its own
  local lifted = b.gate and b.gate <= now and recent_key and lookback > 0 and now - b.gate <= lookback
  if b.gate and (b.gate > now or lifted) then
    if until_us > b.gate then
      -- The bot's gate is up (or just lifted), so this call was made during the bot-wide penalty, and Telegram
      -- extends a penalty on every call made during it: the bot's gate moves too (no second AIMD cut; climbing
      -- waits for the gate).
      if b.m then
        b.m = multiplier(b, inc)
        b.mt = until_us
      end
      b.gate = until_us
      write_bot(KEYS[2], b, inc)
    end
  elseif recent_key and lookback > 0 and not (recent_end and recent_end >= until_us) then
    redis.call('SET', recent_key, fmt(until_us) .. '|' .. fmt(now), 'PX', ceil_ms(lookback))
  end
  local tat, gate = read_pair(KEYS[1])
  if gate and gate > until_us then
    until_us = gate
  end
  write_pair(KEYS[1], tat, until_us)
  return {ceil_ms(until_us - now), multiplier(b, inc)}
end

if op == 'late' then
  local v = redis.call('GET', KEYS[1])
  local seq, rest = 0, ''
  if v then
    local bar = string.find(v, '|', 1, true)
    seq = string.sub(v, 1, bar - 1) + 0
    rest = string.sub(v, bar + 1)
  end
  local fs = tonumber(ARGV[2]) + tonumber(ARGV[3])
  if fs <= seq then
    fs = seq + 1
  end
  rest = rest .. string.format('%.0f:%.0f,', fs, now + tonumber(ARGV[4]))
  if #rest > 4096 then
    -- bounded: the oldest floors go first (they are the nearest to being reached, or already past)
    rest = string.sub(rest, string.find(rest, ',', #rest - 4096, true) + 1)
  end
  redis.call('SET', KEYS[1], string.format('%.0f', seq) .. '|' .. rest, 'PX', 600000)
  return {fs, seq}
end

if op == 'marks' then
  local ttl = ARGV[2]
  for j = 1, #KEYS do
    redis.call('SET', KEYS[j], ARGV[2 + j], 'PX', ttl)
  end
  return #KEYS
end

if op == 'seed' then
  local s = read_bot(KEYS[1])
  local floor_tat = now + tonumber(ARGV[2]) * 1000
  if not s.g or s.g < floor_tat then
    s.g = floor_tat
    write_bot(KEYS[1], s, tonumber(ARGV[3]))
  end
  local left = s.g - now
  if left < 0 then left = 0 end
  return {ceil_ms(left)}
end

return redis.error_reply('sluice budget: unknown operation ' .. tostring(op))
