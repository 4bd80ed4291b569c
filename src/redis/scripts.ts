// The Redis store's Lua scripts. Each admission, observation, release,
// renewal and leave is one script call: one round trip, atomic, and timed by
// Redis `TIME`, never by a process's clock.
//
// Keys of one bucket (all in one Redis Cluster slot through the `{bucket}` tag):
//   KEYS[1] state    hash: `known` (0/1), `cooldown` (epoch ms, after a 429),
//                    `quiet` (epoch ms, after requests that got no response), `probe` (lease),
//                    `seq` (arrival counter), `turn` (the turn last served), `asking`
//                    (epoch ms: until then, the processes waiting are asked what Redis lost),
//                    `ended:w:<limit>` (the resetId of the last window seen to end),
//                    `w:<limit>` = "remaining:resetId:resetAt" (a window learnt from a 429
//                    adds ":limit:span:until:fresh": it starts over), `opening` (learnWindow's),
//                    `span` (the longest
//                    seconds-until reset said, in ms; -1 after a 429), and the budget
//                    learnt while none is stated (or after a 429, `strict`): `allow`,
//                    `sent`, `from`, `pace`, `ceiling`, `calm`, `losses`; `strikes` (429s in a row)
//   KEYS[2] leases   zset: lease -> expiry (epoch ms); short, renewed by the living process
//   KEYS[3] queue    zset: store -> its next turn and arrival (turn * 1e6 + arrival)
//   KEYS[4] tickets  zset: store -> expiry of its place in line (epoch ms), renewed the same way
//   KEYS[5] turns    hash: store -> "next:at", the turn after the last one it was served, and when
//   KEYS[6] lapsed   hash: lease -> the windows it was charged to when it lapsed ("w:<limit>=resetId ...")
// Every key expires a minute after the last thing it remembers ends.
//
// A lease that lapses (its process died, froze or lost Redis) may have let a
// request reach the service that nobody will report: it is charged to every
// known window, as spent. A process that finds its lease lapsed before the
// request left releases it, and the charge is given back to the windows that
// are still the same.
//
// Turns go round: each request of a store takes the store's next turn, and a
// store that was idle starts at the turn last served. A store is admitted
// once the budget covers every turn that comes before its own (the turns of
// the stores waiting in line), so with equal demand each store gets one
// request per round, whatever its concurrency.

const PRELUDE = `
local S, L, Q, T, U, G = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local MAX_WINDOWS = 4
local ASK_MS = 250
local ORDER = 1000000
local BUSY_MS = 1000

local function fmt(x) return string.format('%.0f', x) end

local DAY = 86400000
-- Never trusted beyond a day, whoever wrote them: no lease or place in line outlives that.
local function within_day(x)
  x = tonumber(x) or 0
  if x ~= x then return 0 end
  return math.max(0, math.min(x, DAY))
end

-- The windows known now, as "w:<limit>" -> { remaining, resetId, resetAt }.
local function known_windows()
  local windows = {}
  local fields = redis.call('HGETALL', S)
  for i = 1, #fields, 2 do
    if string.sub(fields[i], 1, 2) == 'w:' then
      local r, id, at, rolls = string.match(fields[i + 1], '^(%d+):(%d+):(%d+)(.*)$')
      if at and tonumber(at) > now then windows[fields[i]] = { tonumber(r), id, at, rolls } end
    end
  end
  return windows
end

-- Charges lapsed leases to every known window, and remembers where.
local function charge(leases)
  if redis.call('HLEN', G) > 1024 then redis.call('DEL', G) end
  local where = {}
  for k, w in pairs(known_windows()) do
    redis.call('HSET', S, k, fmt(math.max(0, w[1] - #leases)) .. ':' .. w[2] .. ':' .. w[3] .. w[4])
    where[#where + 1] = k .. '=' .. w[2]
  end
  if #where == 0 then return end
  for _, lease in ipairs(leases) do redis.call('HSET', G, lease, table.concat(where, ' ')) end
end

-- A lapsed lease whose request never left: its charge goes back to the windows still the same.
local function give_back(lease)
  local where = redis.call('HGET', G, lease)
  if not where then return end
  redis.call('HDEL', G, lease)
  local windows = known_windows()
  for k, id in string.gmatch(where, '(w:%d+)=(%d+)') do
    local w = windows[k]
    if w and w[2] == id then redis.call('HSET', S, k, fmt(w[1] + 1) .. ':' .. w[2] .. ':' .. w[3] .. w[4]) end
  end
end

-- Forgets lapsed leases (charging them) and places in line; how many it forgot.
local function purge()
  local lapsed = redis.call('ZRANGEBYSCORE', L, '-inf', now)
  local gone = #lapsed
  if gone > 0 then
    redis.call('ZREMRANGEBYSCORE', L, '-inf', now)
    charge(lapsed)
  end
  gone = gone + redis.call('ZREMRANGEBYSCORE', L, '(' .. fmt(now + DAY), '+inf')
  redis.call('ZREMRANGEBYSCORE', T, '(' .. fmt(now + DAY), '+inf')
  local probe = redis.call('HGET', S, 'probe')
  if probe and not redis.call('ZSCORE', L, probe) then redis.call('HDEL', S, 'probe') end
  local stale = redis.call('ZRANGEBYSCORE', T, '-inf', now, 'LIMIT', 0, 64)
  for _, id in ipairs(stale) do
    redis.call('ZREM', Q, id)
    redis.call('ZREM', T, id)
    gone = gone + 1
  end
  return gone
end

-- What may be sent now: inflight, known, left (nil: no window binds), the
-- reset of the binding window, the cooldown's end, and the windows read.
local function budget()
  local inflight = redis.call('ZCARD', L)
  local fields = redis.call('HGETALL', S)
  local known, left, reset, cooldown, windows, quiet, ended = false, nil, nil, 0, {}, 0, false
  for i = 1, #fields, 2 do
    local k, v = fields[i], fields[i + 1]
    if k == 'known' then
      known = v == '1'
    elseif k == 'cooldown' then
      cooldown = tonumber(v) or 0
    elseif k == 'quiet' then
      quiet = tonumber(v) or 0
    elseif string.sub(k, 1, 2) == 'w:' then
      local r, id, at, rolls = string.match(v, '^(%d+):(%d+):(%d+)(.*)$')
      r, id, at = tonumber(r), tonumber(id), tonumber(at)
      local limit, span, untilAt = string.match(rolls or '', '^:(%d+):(%d+):(%d+)')
      -- A window learnt from a 429 starts over (MemoryQuotaStore's learnWindow).
      if at and at <= now and untilAt and tonumber(untilAt) > now then
        r, id, at = tonumber(limit), 0, now + tonumber(span)
        rolls = ':' .. limit .. ':' .. span .. ':' .. untilAt .. ':1'
        redis.call('HSET', S, k, fmt(r) .. ':0:' .. fmt(at) .. rolls, 'known', '0')
        ended = true
      end
      if not at or at <= now then
        redis.call('HDEL', S, k)
        -- Remembered, so that a process that saw it does not tell it back as lost.
        if id then redis.call('HSET', S, 'ended:' .. k, id) end
        redis.call('HSET', S, 'known', '0')
        ended = true
      else
        windows[k] = { r, id, at, rolls }
        if left == nil or r - inflight < left then
          left, reset = r - inflight, at
        end
      end
    end
  end
  return inflight, known and not ended, left, reset, cooldown, windows, quiet
end

-- The learnt budget (MemoryQuotaStore's takeLearnt): true when one more
-- request may go (and counts it), else -1 (until a response) or the ms left
-- of the round.
local function take_learnt(inflight, peek)
  local v = redis.call('HMGET', S, 'allow', 'sent', 'from', 'pace', 'ceiling', 'calm', 'losses')
  local allow, sent = tonumber(v[1]) or 1048576, tonumber(v[2]) or 0
  local from, pace = tonumber(v[3]) or 0, tonumber(v[4]) or 0
  local ceiling, calm, losses = tonumber(v[5]) or 0, tonumber(v[6]) or 0, tonumber(v[7]) or 0
  if inflight == 0 and now >= from + pace then
    -- A round spent whole: the next one's size (MemoryQuotaStore's grow).
    if sent >= allow then
      calm = calm + 1
      if ceiling == 0 or allow * 2 < ceiling then
        allow = math.min(allow * 2, 1048576)
      elseif allow + 1 < ceiling then
        allow = allow + 1
      elseif allow >= ceiling then
        losses, ceiling = math.max(0, math.min(losses, 6) - 1), allow + 1
        if losses == 0 and pace <= 0 then ceiling, allow = 0, math.min(allow * 2, 1048576) end
      elseif calm % 2 ^ math.min(losses, 6) == 0 then
        allow = allow + 1
      end
    end
    sent, from = 0, now
  end
  if peek then return allow - sent end
  if sent >= allow then
    if inflight > 0 then return -1 end
    return from + pace - now
  end
  redis.call('HSET', S, 'allow', allow, 'sent', sent + 1, 'from', fmt(from), 'pace', fmt(pace))
  redis.call('HSET', S, 'ceiling', ceiling, 'calm', calm, 'losses', losses)
  return true
end

-- Which waiting stores may go now, as one message ('' when none may).
local function next_tickets()
  local inflight, known, left, _, cooldown, _, quiet = budget()
  if cooldown > now or quiet > now then return '' end
  local n
  if not known then
    if redis.call('HGET', S, 'probe') then return '' end
    n = 1
  else
    n = math.min(left or 64, 64)
    if left == nil or redis.call('HGET', S, 'strict') == '1' then
      n = math.min(n, take_learnt(inflight, true))
    end
  end
  if n <= 0 then return '' end
  return table.concat(redis.call('ZRANGE', Q, 0, n - 1), ' ')
end

local function wake(channel)
  local tickets = next_tickets()
  if tickets ~= '' then redis.call('PUBLISH', channel, tickets) end
end

-- A window a process saw that Redis does not know, and did not see end (Redis
-- lost it: restarted empty, flushed, failed over), is taken as spent: what
-- remained of it may have been sent. limit, resetId, ms until its reset, and
-- '1' for a reset said in seconds-until: its resetId is the process's own, so
-- it is taken only while Redis knows it lost the budget (lost).
local function teach(limit, id, ms, approximate, lost)
  if not ms or ms == '' or redis.call('HGET', S, 'w:' .. limit) then return end
  if approximate == '1' and not lost then return end
  id, ms = tonumber(id), within_day(ms)
  local ended = tonumber(redis.call('HGET', S, 'ended:w:' .. limit)) or -1
  if id and id > ended and ms > 0 then redis.call('HSET', S, 'w:' .. limit, '0:' .. fmt(id) .. ':' .. fmt(now + ms)) end
end

-- Every key lives a minute past the last thing it remembers.
local function touch()
  local last = now
  local _, _, _, _, cooldown, windows, quiet = budget()
  last = math.max(last, cooldown, quiet)
  for _, w in pairs(windows) do last = math.max(last, w[3]) end
  for _, key in ipairs({ L, T }) do
    local top = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
    if top[2] then last = math.max(last, tonumber(top[2])) end
  end
  local ttl = fmt(math.min(last - now, 2 * DAY) + 60000)
  for _, key in ipairs({ S, L, Q, T, U, G }) do redis.call('PEXPIRE', key, ttl) end
end
`;

/**
 * ARGV: lease, store, leaseMs, wake channel, and optionally the last window
 * the store saw: its limit, resetId, ms until its reset and whether it was approximate.
 * Reply: {1, lease, strikes} or {0, reason, waitMs (-1: until a response)}.
 */
const ADMIT = `${PRELUDE}
local lease, store, channel = ARGV[1], ARGV[2], ARGV[4]
local leaseMs = math.max(1, within_day(ARGV[3]))
-- Nothing of this budget in Redis: never used, expired, or lost.
local blank = redis.call('EXISTS', S) == 0
local lost = blank or (tonumber(redis.call('HGET', S, 'asking')) or 0) > now
local lapsed = purge()
teach(ARGV[5], ARGV[6], ARGV[7], ARGV[8], lost)
local inflight, known, left, reset, cooldown, _, quiet = budget()

-- This store's turn: its place in line, or the next after its last one. A
-- store back after a pause (nothing asked for a second) starts at the turn
-- last served: turns missed while idle are not owed.
local served = tonumber(redis.call('HGET', S, 'turn')) or 0
local placed = tonumber(redis.call('ZSCORE', Q, store))
local turn
if placed then
  turn = math.floor(placed / ORDER)
else
  local mine, at = string.match(redis.call('HGET', U, store) or '', '^(%d+):(%d+)$')
  mine, at = tonumber(mine), tonumber(at)
  if mine and now - at <= BUSY_MS then turn = mine else turn = math.max(mine or 0, served) end
end

local function deny(reason, waitMs)
  if not placed then
    local seq = redis.call('HINCRBY', S, 'seq', 1) % ORDER
    redis.call('ZADD', Q, fmt(turn * ORDER + seq), store)
  end
  redis.call('ZADD', T, fmt(now + leaseMs), store)
  if lapsed > 0 then wake(channel) end
  touch()
  return { 0, reason, waitMs }
end

if cooldown > now then return deny('cooldown', cooldown - now) end
if quiet > now then return deny('no-response', quiet - now) end
if left ~= nil and left <= 0 then
  return deny(inflight > 0 and 'budget-in-flight' or 'budget-exhausted', reset - now)
end
-- Processes wait on a budget Redis holds nothing of: it lost what they know (a
-- window, a cooldown). They are asked to tell it, and every request waits
-- ASK_MS for their answers before one goes out as the probe.
local asking = tonumber(redis.call('HGET', S, 'asking')) or 0
if blank and redis.call('PUBLISH', channel, 'tell') > 0 then
  asking = now + ASK_MS
  redis.call('HSET', S, 'asking', fmt(asking))
end
if asking > now and not known then return deny('budget-unknown', asking - now) end
-- The turns of the others that come before this one: those of the stores in
-- line, and (ahead) one for each store served within BUSY_MS whose next turn
-- is earlier (its requests are in flight, and it will ask again), until when.
local before, busy, ahead = 0, nil, 0
if left ~= nil or not known then
  local line = redis.call('ZRANGE', Q, 0, 255, 'WITHSCORES')
  local waiting = {}
  for i = 1, #line, 2 do
    waiting[line[i]] = true
    if line[i] ~= store then
      local score = tonumber(line[i + 1])
      local theirs = math.floor(score / ORDER)
      local turns = turn - theirs
      if placed and theirs <= turn and score < placed then turns = turns + 1 end
      if not placed and theirs <= turn then turns = turns + 1 end
      if turns > 0 then before = before + turns end
    end
  end
  -- Past 512 stores seen (short-lived functions), the turns start over.
  if redis.call('HLEN', U) > 512 then redis.call('DEL', U) end
  local others = redis.call('HGETALL', U)
  for i = 1, #others, 2 do
    local id = others[i]
    local next, at = string.match(others[i + 1], '^(%d+):(%d+)$')
    next, at = tonumber(next), tonumber(at)
    if not at or now - at > 60000 then
      redis.call('HDEL', U, id)
    elseif id ~= store and not waiting[id] and now - at <= BUSY_MS and next < turn then
      ahead = ahead + 1
      busy = math.min(busy or math.huge, at + BUSY_MS)
    end
  end
end
local learnt = left == nil or redis.call('HGET', S, 'strict') == '1'
if not known then
  if redis.call('HGET', S, 'probe') or before > 0 then return deny('budget-unknown', -1) end
  redis.call('HSET', S, 'probe', lease)
  if learnt then take_learnt(0) end
elseif left ~= nil and before + ahead >= left then
  return deny('budget-in-flight', math.min(reset, busy or reset) - now)
elseif learnt then
  local took = take_learnt(inflight)
  if took == -1 then return deny('budget-in-flight', -1) end
  if took ~= true then return deny('budget-exhausted', took) end
end
redis.call('ZADD', L, fmt(now + leaseMs), lease)
if (tonumber(redis.call('HGET', S, 'opening')) or 0) < 0 then redis.call('HSET', S, 'opening', fmt(now)) end
redis.call('HSET', U, store, fmt(turn + 1) .. ':' .. fmt(now))
if turn > served then redis.call('HSET', S, 'turn', turn) end
if placed then
  redis.call('ZREM', Q, store)
  redis.call('ZREM', T, store)
end
if lapsed > 0 then wake(channel) end
touch()
return { 1, lease, tonumber(redis.call('HGET', S, 'strikes')) or 0 }
`;

/**
 * ARGV: lease, status, limit, remaining, resetId, resetInMs (the last four ''
 * without a window), approximate (0/1: the reset was an estimate, and the
 * report belongs to the window still known), cooldownMs, wake channel, store,
 * the window's stated length in ms (0 when not stated), guessed (0/1: the
 * cooldown is the client's back-off, which then paces the learnt rounds),
 * how long the response took (an approximate reset may be that old).
 */
const OBSERVE = `${PRELUDE}
local lease, status = ARGV[1], tonumber(ARGV[2])
local slack, cooldownMs, channel = ARGV[7] == '1' and 1 or 0, within_day(ARGV[8]), ARGV[9]
purge()
local inflight, known, _, _, cooldown, windows = budget()
local stated = next(windows) ~= nil
-- While the budget is unknown, only the probe's answer teaches it.
local teaches = known or redis.call('HGET', S, 'probe') == lease
local answered = (status >= 200 and status < 300) or (status >= 400 and status < 429)
-- An answer of the service to a request sent since the last 429 ends the 429s in a row.
if answered then redis.call('HINCRBY', S, 'got', 1) end
-- The request counts against every window its response does not restate, and a window started
-- over began, at the latest, as the first answer after came.
for k, w in pairs(windows) do
  local limit, span, untilAt, fresh = string.match(w[4], '^:(%d+):(%d+):(%d+):(%d)$')
  if fresh == '1' and status ~= 0 then w[3], w[4] = now + tonumber(span), ':' .. limit .. ':' .. span .. ':' .. untilAt .. ':0' end
  if k ~= 'w:' .. ARGV[3] then w[1] = math.max(0, w[1] - 1) end
  redis.call('HSET', S, k, fmt(w[1]) .. ':' .. fmt(w[2]) .. ':' .. fmt(w[3]) .. w[4])
end
if teaches and answered then
  -- MemoryQuotaStore's endStreak: a limiter closed as long as it was open paces rounds by the cycle.
  local v = redis.call('HMGET', S, 'strikes', 'struck', 'opened', 'got', 'pace')
  local strikes, struck, opened = tonumber(v[1]) or 0, tonumber(v[2]) or 0, tonumber(v[3]) or 0
  local got, pace = tonumber(v[4]) or 0, tonumber(v[5]) or 0
  if strikes > 1 and struck > 0 and opened > 0 and now - struck >= struck - opened then
    local ceiling = math.max(1, got)
    redis.call('HSET', S, 'pace', fmt(math.min(math.max(pace, now - opened), 600000)))
    redis.call('HSET', S, 'ceiling', ceiling, 'allow', math.ceil(ceiling / 2))
  end
  if strikes > 0 or opened == 0 then redis.call('HSET', S, 'opened', fmt(now), 'got', 0) end
  redis.call('HSET', S, 'strikes', 0)
end
if ARGV[3] ~= '' then
  local k = 'w:' .. ARGV[3]
  local remaining, resetId = math.max(0, tonumber(ARGV[4]) or 0), tonumber(ARGV[5]) or 0
  local resetAt = now + within_day(ARGV[6])
  local w = windows[k]
  -- An estimated reset (slack 1) belongs to the window still known, unless
  -- it must end after it however it was rounded; so does an earlier reset
  -- that, on the known window's clock, ends more than a second ahead (windowOrder).

  local newer = slack == 0 and w and resetId > w[2]
  if slack == 1 and w then newer = now - within_day(ARGV[13]) + within_day(ARGV[6]) - 2000 > w[3] end
  if w and w[4] ~= '' then newer = true end
  -- A second-rounded reset that is a whole window is followed to the second (resetIn).
  if slack == 1 and (not w or newer) then
    local said, span = within_day(ARGV[6]) - 1000, tonumber(redis.call('HGET', S, 'span')) or 0
    local whole = math.max(span, within_day(ARGV[11]))
    if span >= 0 then
      redis.call('HSET', S, 'span', fmt(math.max(span, said)))
      if whole > 0 and said >= whole then resetAt = now + said end
    end
  end
  if not w or newer then
    redis.call('HSET', S, k, fmt(remaining) .. ':' .. fmt(resetId) .. ':' .. fmt(resetAt))
    windows[k] = { remaining, resetId, resetAt, '' }
    local count, soonest, at = 0, nil, nil
    for name, v in pairs(windows) do
      count = count + 1
      if at == nil or v[3] < at then soonest, at = name, v[3] end
    end
    if count > MAX_WINDOWS then redis.call('HDEL', S, soonest) end
  elseif (slack == 1 or resetId == w[2] or w[3] - (w[2] - resetId) * 1000 > now + 1000) and remaining < w[1] then
    redis.call('HSET', S, k, fmt(remaining) .. ':' .. fmt(w[2]) .. ':' .. fmt(w[3]) .. w[4])
  end
  if teaches then redis.call('HSET', S, 'known', '1') end
elseif teaches and answered then
  redis.call('HSET', S, 'known', '1')
end
if status == 429 and ARGV[12] ~= '1' then
  -- A limit no other response states (MemoryQuotaStore's learnWindow).
  local opening = tonumber(redis.call('HGET', S, 'opening')) or 0
  redis.call('HSET', S, 'opening', -1)
  local key = 'w:' .. ARGV[3]
  local others = false
  for other in pairs(windows) do
    if other ~= key then others = true end
  end
  local w = windows[key]
  if ARGV[3] ~= '' and (tonumber(ARGV[3]) or 0) >= 1 and others and w then
    local span = within_day(ARGV[11])
    if span == 0 then span = w[3] - (opening > 0 and opening or now) end
    w[4] = ':' .. ARGV[3] .. ':' .. fmt(math.max(1, span)) .. ':' .. fmt(now + DAY) .. ':0'
    redis.call('HSET', S, key, fmt(w[1]) .. ':' .. fmt(w[2]) .. ':' .. fmt(w[3]) .. w[4])
  end
end
if status == 429 then
  -- The learnt budget (MemoryQuotaStore's learnt429): the 429s of one round are one loss.
  local guessed = ARGV[12] == '1'
  local v = redis.call('HMGET', S, 'allow', 'from', 'pace', 'losses', 'strikes', 'ceiling', 'calm', 'sent')
  local allow, from, pace = tonumber(v[1]) or 1048576, tonumber(v[2]) or 0, tonumber(v[3]) or 0
  local losses, strikes = tonumber(v[4]) or 0, tonumber(v[5]) or 0
  local ceiling, calm = tonumber(v[6]) or 0, tonumber(v[7]) or 0
  if from <= now then
    local lost = allow
    if allow >= 1048576 then lost = math.max(1, (tonumber(v[8]) or 0) - inflight + 1) end
    if not guessed then
      allow = math.floor(lost / 2)
    else
      if lost < ceiling and calm > 0 then pace = math.min(pace * 2, 600000) end
      if ceiling == 0 or lost > ceiling then allow = math.floor(lost / 2) else allow = lost - 1 end
    end
    if not guessed or (ceiling > 0 and lost >= ceiling) then losses = losses + 1 end
    if guessed or not stated then ceiling = lost else ceiling = 0 end
    if strikes == 0 then redis.call('HSET', S, 'struck', guessed and fmt(now) or 0) end
    allow, calm, strikes = math.max(1, allow), 0, strikes + 1
  elseif guessed then
    allow = math.max(1, allow - 1)
  end
  if strikes == 1 and (guessed or losses > 1) then
    pace = math.max(pace, math.min(cooldownMs, 600000))
  end
  from = math.max(from, now + cooldownMs, now + pace)
  redis.call('HSET', S, 'cooldown', fmt(math.max(cooldown, from)), 'allow', allow, 'sent', 0)
  redis.call('HSET', S, 'from', fmt(from), 'pace', fmt(pace), 'ceiling', ceiling, 'calm', calm)
  -- Stated windows are not trusted alone after a 429, unless one was learnt from a 429.
  local strict = 1
  for _, w in pairs(windows) do
    if w[4] ~= '' then strict = 0 end
  end
  redis.call('HSET', S, 'span', -1, 'strict', strict, 'losses', losses, 'strikes', strikes)
elseif status == 0 and cooldownMs > 0 then
  local quiet = tonumber(redis.call('HGET', S, 'quiet')) or 0
  redis.call('HSET', S, 'quiet', fmt(math.max(quiet, now + cooldownMs)))
end
if status == 429 then redis.call('HSET', S, 'known', '0') end
redis.call('ZREM', L, lease)
redis.call('HDEL', G, lease)
if redis.call('HGET', S, 'probe') == lease then redis.call('HDEL', S, 'probe') end
wake(channel)
touch()
return 1
`;

/** ARGV: lease, wake channel. */
const RELEASE = `${PRELUDE}
purge()
if redis.call('ZREM', L, ARGV[1]) == 0 then give_back(ARGV[1]) end
if redis.call('HGET', S, 'probe') == ARGV[1] then redis.call('HDEL', S, 'probe') end
wake(ARGV[2])
touch()
return 1
`;

/**
 * A living store keeps its leases and its place in line: ARGV: store, lifeMs,
 * wake channel, what is left of the last 429's cooldown it saw (ms, 0: none),
 * the last window it saw (limit, resetId, ms until its reset, approximate; '' for none),
 * then the leases of its requests in flight that it knows hold. A Redis that
 * lost them (restarted empty, flushed, or failed over before it had them) is
 * taught them again.
 */
const RENEW = `${PRELUDE}
local store, lifeMs, channel = ARGV[1], math.max(1, within_day(ARGV[2])), ARGV[3]
local cooling = within_day(ARGV[4])
-- Lost: nothing of the budget left, or its processes asked to tell what they know.
local lost = redis.call('EXISTS', S) == 0 or (tonumber(redis.call('HGET', S, 'asking')) or 0) > now
local lapsed = purge()
teach(ARGV[5], ARGV[6], ARGV[7], ARGV[8], lost)
local expiry = fmt(now + lifeMs)
if cooling > 0 then
  local cooldown = tonumber(redis.call('HGET', S, 'cooldown')) or 0
  if now + cooling > cooldown then redis.call('HSET', S, 'cooldown', fmt(now + cooling)) end
end
for i = 9, #ARGV do
  redis.call('ZADD', L, expiry, ARGV[i])
  redis.call('HDEL', G, ARGV[i])
end
if redis.call('ZSCORE', Q, store) then redis.call('ZADD', T, expiry, store) end
if lapsed > 0 then wake(channel) end
touch()
return 1
`;

/** A store stops waiting. ARGV: store, wake channel. */
const LEAVE = `${PRELUDE}
purge()
redis.call('ZREM', Q, ARGV[1])
redis.call('ZREM', T, ARGV[1])
wake(ARGV[2])
touch()
return 1
`;

/** A Lua script with its SHA-1, for `EVALSHA`. */
export interface RedisScript {
  readonly name: 'admit' | 'observe' | 'release' | 'renew' | 'leave';
  /** The Lua source, for `EVAL` when the server does not know the script yet. */
  readonly source: string;
}

export const SCRIPTS = {
  admit: { name: 'admit', source: ADMIT },
  observe: { name: 'observe', source: OBSERVE },
  release: { name: 'release', source: RELEASE },
  renew: { name: 'renew', source: RENEW },
  leave: { name: 'leave', source: LEAVE },
} as const satisfies Record<string, RedisScript>;
