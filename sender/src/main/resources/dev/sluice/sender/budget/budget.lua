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
-- Keys hold packed strings, so a decision reads each of them with ONE GET and writes only what changed:
--   sluice:{b}:bot          "<global TAT>|<bot gate>|<AIMD m ppm>|<AIMD climb start>|<backfill TAT>"
--   sluice:{b}:chat:<id>    "<chat TAT>|<chat gate>"
--   sluice:{b}:group:<id>   "<group TAT>|<group gate>"
-- (an empty field = absent: a full bucket, no gate, the configured rate). A key's PX TTL is the time until
-- the latest of its fields stops mattering (TAT reached, gate lifted, AIMD multiplier climbed back to 1).
--
-- op 'acquire'
--   KEYS[1] sluice:{b}:bot
--   then per candidate: sluice:{b}:chat:<id>; for groups also sluice:{b}:group:<id>; with flag 4 also the
--   sent mark sluice:{b}:sent:<message id> (the idempotency key written by the sender after a send)
--   ARGV[2] global interval us at the configured rate   ARGV[3] global burst
--   ARGV[4] chat interval us    ARGV[5] chat tolerance us
--   ARGV[6] group interval us   ARGV[7] group tolerance us
--   ARGV[8] backfill headroom ppm (share of the global rate reserved for live, 0..999999)
--   ARGV[9] backfill burst      ARGV[10] AIMD additive increase, ppm of the rate per second
--   ARGV[11] reservation horizon us (see flag 8)
--   ARGV[12..] one flag per candidate: 1 = backfill lane, 2 = group, 4 = check the sent mark,
--              8 = may reserve (bits)
--   -> {multiplier_ppm, code_1, wait_ms_1, code_2, wait_ms_2, ...}; code 0 granted (wait 0), else the limit:
--      1 GLOBAL, 2 CHAT, 3 GROUP, 4 GATE_CHAT, 5 GATE_GROUP, 6 GATE_BOT, 7 HEADROOM, 10 ALREADY_SENT (then the
--      second item is the sent mark's value, and nothing was consumed).
--   Candidates are decided in order, each all or nothing: a refused one writes nothing.
--   Reservation (flag 8, live only): when no gate is active and the chat and group limits pass now but the
--   global GCRA refuses with a wait w <= ARGV[11], the candidate is granted for the instant now + w instead:
--   code 0 with wait_ms = ceil(w / 1000), and every TAT moves as for an arrival at now + w (the GCRA rule for
--   an arrival at that instant). The caller must not send before the returned wait; sending later is safe.
--   So N replicas asking for one bot's next slots do not collide: each call takes a slot instead of a refusal.
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
--   -> {gate_ms_left, multiplier_ppm}. An existing longer gate is kept. For 'bot', the multiplier is cut
--   (m <- max(floor, m * factor)) only when no bot gate was active (one cut per penalty episode, however
--   many replicas report the same 429); it starts climbing back when the gate lifts. For 'gate' while the
--   bot's gate is up, the bot's gate is extended to the new penalty's end too (Telegram extends a penalty
--   on every call made during it, and this call was).
--
-- op 'seed' (after an outage: a recovered empty Redis must not hand out a fresh burst)
--   KEYS[1] sluice:{b}:bot   ARGV[2] global TAT floor, ms from now (>= 0)   ARGV[3] AIMD increase ppm per s
--   -> {global TAT ms from now}. The global TAT becomes at least now + ARGV[2]; nothing else changes.

-- Redis < 5 replicates scripts verbatim and forbids writes after TIME unless effects are replicated.
if redis.replicate_commands then
  redis.replicate_commands()
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local PPM = 1000000

local function ceil_div(a, b)
  local q = math.floor(a / b)
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

-- The AIMD multiplier now: m climbs additively from instant mt (never above 10^6 = the configured rate).
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

-- One SET with a TTL until the latest field stops mattering; the AIMD fields go once m is back at 10^6.
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
  if s.gate and s.gate <= now then s.gate = nil end
  if s.g and s.g > last then last = s.g end
  if s.gate and s.gate > last then last = s.gate end
  if s.bf and s.bf > last then last = s.bf end
  if last > now then
    redis.call('SET', key, fmt(s.g) .. '|' .. fmt(s.gate) .. '|' .. fmt(s.m) .. '|' .. fmt(s.mt) .. '|' .. fmt(s.bf),
        'PX', ceil_ms(last - now))
  end
end

local op = ARGV[1]

if op == 'penalize' then
  local until_us = now + tonumber(ARGV[3]) * 1000
  local inc = tonumber(ARGV[6])
  if ARGV[2] == 'bot' then
    local s = read_bot(KEYS[1])
    local active = s.gate and s.gate > now
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
  if b.gate and b.gate > now and until_us > b.gate then
    -- The bot's gate is up, so this call was made during the bot-wide penalty, and Telegram extends a penalty
    -- on every call made during it: the bot's gate moves too (no second AIMD cut; climbing waits for the gate).
    if b.m then
      b.m = multiplier(b, inc)
      b.mt = until_us
    end
    b.gate = until_us
    write_bot(KEYS[2], b, inc)
  end
  local tat, gate = read_pair(KEYS[1])
  if gate and gate > until_us then
    until_us = gate
  end
  write_pair(KEYS[1], tat, until_us)
  return {ceil_ms(until_us - now), multiplier(b, inc)}
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

if op ~= 'acquire' then
  return redis.error_reply('sluice budget: unknown operation ' .. tostring(op))
end

local g_base = tonumber(ARGV[2])
local g_burst = tonumber(ARGV[3])
local c_interval = tonumber(ARGV[4])
local c_tolerance = tonumber(ARGV[5])
local p_interval = tonumber(ARGV[6])
local p_tolerance = tonumber(ARGV[7])
local headroom = tonumber(ARGV[8])
local bf_burst = tonumber(ARGV[9])
local inc = tonumber(ARGV[10])
local horizon = tonumber(ARGV[11])

local s = read_bot(KEYS[1])
local m = multiplier(s, inc)
local g_interval = ceil_div(g_base * PPM, m)
local g_tolerance = (g_burst - 1) * g_interval
local reserve = ceil_div(headroom * g_burst * g_interval, PPM)
local bf_interval = ceil_div(g_interval * PPM, PPM - headroom)
local bf_tolerance = (bf_burst - 1) * bf_interval

-- a missing TAT is a bucket idle since long ago (0), not since now: the reserve check below needs the raw TAT
local g_tat = s.g or 0
local dirty = false

local bot_gate_wait = 0
if s.gate and s.gate > now then
  bot_gate_wait = s.gate - now
end

-- wait (us) until a GCRA with this TAT and tolerance passes; 0 if it passes now
local function gcra_wait(tat, tolerance)
  local allow_at = tat - tolerance
  if now < allow_at then
    return allow_at - now
  end
  return 0
end

local function at_least_now(x)
  if x == nil or x < now then
    return now
  end
  return x
end

local out = {m}
local k = 2
for i = 12, #ARGV do
  local flags = tonumber(ARGV[i])
  local backfill = flags % 2 == 1
  local group = math.floor(flags / 2) % 2 == 1
  local check = math.floor(flags / 4) % 2 == 1
  local may_reserve = math.floor(flags / 8) % 2 == 1 and not backfill
  local chat_key = KEYS[k]
  k = k + 1
  local group_key, sent_key = nil, nil
  if group then
    group_key = KEYS[k]
    k = k + 1
  end
  if check then
    sent_key = KEYS[k]
    k = k + 1
  end

  local mark = nil
  if check then
    mark = redis.call('GET', sent_key)
  end
  if mark then
    -- already sent (a redelivery): not sent again, nothing consumed
    out[#out + 1] = 10
    out[#out + 1] = mark
  else
    local c_tat, c_gate = read_pair(chat_key)
    local p_tat, p_gate = nil, nil
    if group then
      p_tat, p_gate = read_pair(group_key)
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

    -- 2. the GCRAs, all evaluated before anything is written: all or nothing
    local c_now = at_least_now(c_tat)
    local p_now = at_least_now(p_tat)
    local g_now = at_least_now(g_tat)
    local send_at = now
    if code == 0 then
      local w = gcra_wait(c_now, c_tolerance)
      if w > wait then code, wait = 2, w end
      if group then
        w = gcra_wait(p_now, p_tolerance)
        if w > wait then code, wait = 3, w end
      end
      w = gcra_wait(g_now, g_tolerance)
      if w > 0 and code == 0 and may_reserve and w <= horizon then
        -- only the global limit refuses, and soon enough: take that slot now (an arrival at now + w)
        send_at = now + w
        if c_now < send_at then c_now = send_at end
        if p_now < send_at then p_now = send_at end
        w = 0
      end
      if w > wait then code, wait = 1, w end
      if backfill and headroom > 0 and w == 0 then
        -- (a) the reserve on the shared TAT, (b) the backfill lane's own rate
        local hw = gcra_wait(g_tat, g_tolerance - reserve)
        local bw = gcra_wait(at_least_now(s.bf), bf_tolerance)
        if bw > hw then hw = bw end
        if hw > wait then code, wait = 7, hw end
      end
    end

    if code == 0 then
      g_tat = g_now + g_interval
      dirty = true
      if backfill and headroom > 0 then
        s.bf = at_least_now(s.bf) + bf_interval
      end
      write_pair(chat_key, c_now + c_interval, c_gate)
      if group then
        write_pair(group_key, p_now + p_interval, p_gate)
      end
      out[#out + 1] = 0
      out[#out + 1] = ceil_ms(send_at - now)
    else
      out[#out + 1] = code
      out[#out + 1] = ceil_ms(wait)
    end
  end
end

if dirty then
  s.g = g_tat
  write_bot(KEYS[1], s, inc)
end
return out
