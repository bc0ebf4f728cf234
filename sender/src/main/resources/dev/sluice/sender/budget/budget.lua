-- Sluice shared budget: one atomic decision for a batch of messages of ONE bot (DESIGN.md, Budget).
--
-- Time comes from the Redis server only (TIME), never from clients. All arithmetic is on integers
-- (microseconds, parts per million) held exactly in Lua doubles (< 2^53). Waits are rounded UP to whole
-- milliseconds, so a caller that waits exactly the returned wait passes. Every key written gets a PX TTL of
-- at least its time to refill (an expired key is the same as a full bucket, a lifted gate or a full rate).
-- All keys of a bot share the hash tag {<bot>}, so the script is Redis Cluster safe. Only integers return.
--
-- GCRA (ITU-T I.371): a request at t passes if t >= TAT - tolerance, tolerance = (burst - 1) * interval;
-- then TAT <- max(TAT, t) + interval. Keys hold the TAT in microseconds since the epoch.
--
-- op 'acquire'
--   KEYS[1] sluice:{b}:tat:global   the bot's GCRA TAT
--   KEYS[2] sluice:{b}:gate:bot     bot gate: the instant (us) a bot-wide 429 penalty lifts
--   KEYS[3] sluice:{b}:aimd         hash {m = rate multiplier ppm, t = us from which m climbs}
--   KEYS[4] sluice:{b}:tat:backfill the backfill lane's own GCRA TAT
--   then per candidate: sluice:{b}:tat:chat:<id>, sluice:{b}:gate:chat:<id>
--                       and for groups also sluice:{b}:tat:group:<id>, sluice:{b}:gate:group:<id>
--   ARGV[2] global interval us at the configured rate   ARGV[3] global burst
--   ARGV[4] chat interval us    ARGV[5] chat tolerance us
--   ARGV[6] group interval us   ARGV[7] group tolerance us
--   ARGV[8] backfill headroom ppm (share of the global rate reserved for live, 0..999999)
--   ARGV[9] backfill burst      ARGV[10] AIMD additive increase, ppm of the rate per second
--   ARGV[11..] one flag per candidate: 1 = backfill lane, 2 = group (bits)
--   -> {multiplier_ppm, code_1, wait_ms_1, code_2, wait_ms_2, ...}; code 0 granted (wait 0), else the limit:
--      1 GLOBAL, 2 CHAT, 3 GROUP, 4 GATE_CHAT, 5 GATE_GROUP, 6 GATE_BOT, 7 HEADROOM.
--   Candidates are decided in order, each all or nothing: a refused one writes nothing.
--
--   Effective global interval I = ceil(interval * 10^6 / m) (AIMD). Backfill (headroom h) passes only if
--   (a) the global GCRA would still pass it with a reserve R = ceil(h * burst * I) taken off its tolerance:
--       t >= TAT - tolerance + R, so a live caller waiting its returned wait always comes first, and
--   (b) its own GCRA at rate (1 - h) * r * m (interval ceil(I * 10^6 / (10^6 - h))) with burst ARGV[9],
--       so backfill alone never takes more than (1 - h) of the rate: h of it stays free for live.
--
-- op 'penalize'
--   KEYS[1] the gate key (chat, group or bot)   KEYS[2] sluice:{b}:aimd
--   ARGV[2] 'bot' or 'gate'   ARGV[3] penalty ms   ARGV[4] AIMD decrease factor ppm   ARGV[5] floor ppm
--   ARGV[6] AIMD increase ppm per second
--   -> {gate_ms_left, multiplier_ppm}. An existing longer gate is kept. For 'bot', the multiplier is cut
--   (m <- max(floor, m * factor)) only when no bot gate was active (one cut per penalty episode, however
--   many replicas report the same 429); it starts climbing back when the gate lifts.

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
  return string.format('%.0f', n)
end

local function read_us(key)
  local v = redis.call('GET', key)
  if v then
    return tonumber(v)
  end
  return nil
end

-- The AIMD multiplier now: m climbs additively from instant t (never above 10^6 = the configured rate).
local function multiplier(aimd_key, inc_ppm_per_s)
  local h = redis.call('HMGET', aimd_key, 'm', 't')
  if not h[1] then
    return PPM, nil, nil
  end
  local m = tonumber(h[1])
  local from = tonumber(h[2])
  if now > from then
    m = m + math.floor(inc_ppm_per_s * (now - from) / PPM)
  end
  if m > PPM then
    m = PPM
  end
  return m, tonumber(h[1]), from
end

local op = ARGV[1]

if op == 'penalize' then
  local is_bot = ARGV[2] == 'bot'
  local until_us = now + tonumber(ARGV[3]) * 1000
  local existing = read_us(KEYS[1])
  local active = existing and existing > now
  if existing and existing > until_us then
    until_us = existing
  end
  redis.call('SET', KEYS[1], fmt(until_us), 'PX', ceil_ms(until_us - now))
  local inc = tonumber(ARGV[6])
  local m = multiplier(KEYS[2], inc)
  if is_bot then
    if not active then
      local floor_ppm = tonumber(ARGV[5])
      m = math.floor(m * tonumber(ARGV[4]) / PPM)
      if m < floor_ppm then
        m = floor_ppm
      end
    end
    -- climbing starts when the gate lifts; the hash expires once m is back at 10^6
    redis.call('HSET', KEYS[2], 'm', fmt(m), 't', fmt(until_us))
    local climb_us = ceil_div((PPM - m) * PPM, inc)
    redis.call('PEXPIRE', KEYS[2], ceil_ms(until_us - now + climb_us) + 1)
  end
  return {ceil_ms(until_us - now), m}
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

local m = multiplier(KEYS[3], inc)
local g_interval = ceil_div(g_base * PPM, m)
local g_tolerance = (g_burst - 1) * g_interval
local reserve = ceil_div(headroom * g_burst * g_interval, PPM)
local bf_interval = ceil_div(g_interval * PPM, PPM - headroom)
local bf_tolerance = (bf_burst - 1) * bf_interval

-- a missing TAT is a bucket idle since long ago (0), not since now: the reserve check below needs the raw TAT
local g_tat = read_us(KEYS[1]) or 0
local bf_tat = nil -- read only when a backfill candidate comes
local g_dirty, bf_dirty = false, false

local bot_gate = read_us(KEYS[2])
local bot_gate_wait = 0
if bot_gate and bot_gate > now then
  bot_gate_wait = bot_gate - now
end

-- wait (us) until a GCRA with this TAT and tolerance passes; 0 if it passes now
local function gcra_wait(tat, tolerance)
  local allow_at = tat - tolerance
  if now < allow_at then
    return allow_at - now
  end
  return 0
end

local out = {m}
local k = 5
for i = 11, #ARGV do
  local flags = tonumber(ARGV[i])
  local backfill = flags % 2 == 1
  local group = math.floor(flags / 2) % 2 == 1
  local chat_tat_key, chat_gate_key = KEYS[k], KEYS[k + 1]
  local group_tat_key, group_gate_key = nil, nil
  k = k + 2
  if group then
    group_tat_key, group_gate_key = KEYS[k], KEYS[k + 1]
    k = k + 2
  end

  -- 1. penalty gates: the longest active one refuses
  local code, wait = 0, 0
  if bot_gate_wait > 0 then
    code, wait = 6, bot_gate_wait
  end
  if group then
    local g = read_us(group_gate_key)
    if g and g - now > wait then
      code, wait = 5, g - now
    end
  end
  local cg = read_us(chat_gate_key)
  if cg and cg - now > wait then
    code, wait = 4, cg - now
  end

  -- 2. the GCRAs, all evaluated before anything is written: all or nothing
  local c_tat, p_tat
  if code == 0 then
    c_tat = read_us(chat_tat_key) or now
    if c_tat < now then c_tat = now end
    local w = gcra_wait(c_tat, c_tolerance)
    if w > wait then code, wait = 2, w end
    if group then
      p_tat = read_us(group_tat_key) or now
      if p_tat < now then p_tat = now end
      w = gcra_wait(p_tat, p_tolerance)
      if w > wait then code, wait = 3, w end
    end
    local g_now = g_tat
    if g_now < now then g_now = now end
    w = gcra_wait(g_now, g_tolerance)
    if w > wait then code, wait = 1, w end
    if backfill and headroom > 0 and w == 0 then
      -- (a) the reserve on the shared TAT, (b) the backfill lane's own rate
      local hw = gcra_wait(g_tat, g_tolerance - reserve)
      if bf_tat == nil then
        bf_tat = read_us(KEYS[4]) or now
      end
      local b_now = bf_tat
      if b_now < now then b_now = now end
      local bw = gcra_wait(b_now, bf_tolerance)
      if bw > hw then hw = bw end
      if hw > wait then code, wait = 7, hw end
    end
  end

  if code == 0 then
    local g_now = g_tat
    if g_now < now then g_now = now end
    g_tat = g_now + g_interval
    g_dirty = true
    if backfill and headroom > 0 then
      local b_now = bf_tat
      if b_now < now then b_now = now end
      bf_tat = b_now + bf_interval
      bf_dirty = true
    end
    local c_new = c_tat + c_interval
    redis.call('SET', chat_tat_key, fmt(c_new), 'PX', ceil_ms(c_new - now))
    if group then
      local p_new = p_tat + p_interval
      redis.call('SET', group_tat_key, fmt(p_new), 'PX', ceil_ms(p_new - now))
    end
    out[#out + 1] = 0
    out[#out + 1] = 0
  else
    out[#out + 1] = code
    out[#out + 1] = ceil_ms(wait)
  end
end

if g_dirty then
  redis.call('SET', KEYS[1], fmt(g_tat), 'PX', ceil_ms(g_tat - now))
end
if bf_dirty then
  redis.call('SET', KEYS[4], fmt(bf_tat), 'PX', ceil_ms(bf_tat - now))
end
return out
