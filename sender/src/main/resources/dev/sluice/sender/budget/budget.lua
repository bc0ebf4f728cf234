-- Sluice shared budget: one atomic decision per message for one bot (DESIGN.md, Budget).
--
-- KEYS (all share the bot's hash tag, so the script is Redis Cluster safe):
--   KEYS[1] sluice:{<bot>}:tat:global     the bot's GCRA TAT, microseconds since the epoch
--   KEYS[2] sluice:{<bot>}:tat:chat:<id>  the chat's GCRA TAT, microseconds since the epoch
--   KEYS[3] sluice:{<bot>}:gate:chat:<id> penalty gate after a 429: the time it lifts, microseconds
-- ARGV[1] operation:
--   'acquire'  ARGV[2] global interval us, ARGV[3] global tolerance us (burst-1)*interval,
--              ARGV[4] chat interval us,   ARGV[5] chat tolerance us
--              -> {1, 0, 0} granted (both TATs advanced), or {0, wait_ms, limit} and nothing written;
--                 limit: 1 GLOBAL, 2 CHAT, 3 GATE
--   'penalize' ARGV[2] penalty ms -> {1, gate_ms, 3}; an existing longer gate is kept
--
-- GCRA: a request at t passes if t >= TAT - tolerance; then TAT <- max(TAT, t) + interval.
-- Time comes from the Redis server only. All arithmetic is on integers (microseconds) held exactly in
-- Lua doubles (< 2^53). Waits are rounded UP to whole milliseconds, so waiting exactly the returned wait
-- passes. Every key written gets a PX TTL of at least its time to refill; an expired key is the same as a
-- full bucket. Only integers are returned.

-- Redis < 5 replicates scripts verbatim and forbids writes after TIME unless effects are replicated.
if redis.replicate_commands then
  redis.replicate_commands()
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

local function ceil_ms(us)
  return math.ceil(us / 1000)
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

local op = ARGV[1]

if op == 'penalize' then
  local until_us = now + tonumber(ARGV[2]) * 1000
  local existing = read_us(KEYS[3])
  if existing and existing > until_us then
    until_us = existing
  end
  local ttl_ms = ceil_ms(until_us - now) + 1
  redis.call('SET', KEYS[3], fmt(until_us), 'PX', ttl_ms)
  return {1, ceil_ms(until_us - now), 4}
end

if op ~= 'acquire' then
  return redis.error_reply('sluice budget: unknown operation ' .. tostring(op))
end

local g_interval = tonumber(ARGV[2])
local g_tolerance = tonumber(ARGV[3])
local c_interval = tonumber(ARGV[4])
local c_tolerance = tonumber(ARGV[5])

-- 1. penalty gates of the bot (KEYS[4]) and of the chat
local bot_gate = read_us(KEYS[4])
if bot_gate and bot_gate > now then
  return {0, ceil_ms(bot_gate - now), 6}
end
local gate = read_us(KEYS[3])
if gate and gate > now then
  return {0, ceil_ms(gate - now), 4}
end

-- 2. both GCRAs are evaluated before anything is written: all or nothing
local function gcra(key, tolerance)
  local tat = read_us(key)
  if (not tat) or tat < now then
    tat = now
  end
  local allow_at = tat - tolerance
  if now < allow_at then
    return tat, allow_at - now
  end
  return tat, 0
end

local c_tat, c_wait = gcra(KEYS[2], c_tolerance)
local g_tat, g_wait = gcra(KEYS[1], g_tolerance)

if c_wait > 0 or g_wait > 0 then
  if c_wait >= g_wait then
    return {0, ceil_ms(c_wait), 2}
  end
  return {0, ceil_ms(g_wait), 1}
end

local g_new = g_tat + g_interval
local c_new = c_tat + c_interval
redis.call('SET', KEYS[1], fmt(g_new), 'PX', ceil_ms(g_new - now))
redis.call('SET', KEYS[2], fmt(c_new), 'PX', ceil_ms(c_new - now))
return {1, 0, 0}
