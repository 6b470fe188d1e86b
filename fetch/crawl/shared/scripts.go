package shared

import (
	"sync"

	"github.com/redis/go-redis/v9"
)

// script is a Lua script made (its SHA-1 computed) when first run, not
// when a command that never runs it starts. Each begins "#!lua": Redis 7
// then refuses it whole, before it runs, when the store is past its
// maxmemory (without the line it runs a script whose first write is a
// deletion, these scripts' case, to its end past the limit), and it
// keeps it to its declared key's slot in a cluster.
func script(src string) func() *redis.Script {
	return sync.OnceValue(func() *redis.Script { return redis.NewScript("#!lua\n" + src) })
}

// The store's keys, below each shard's base P: the prefix (Open's
// prefix=) on one store; "{PREFIX:N}" in a cluster, so that a shard's
// keys share a slot (the crawl's root, "{PREFIX}", holds the record, the
// robots.txt rules and the workers' files):
//
//	P:crawl       a hash: the crawl's record: id (every script is given
//	              it and refuses to run where it differs: a store emptied
//	              under the crawl), shards (the root's: the shards' tags),
//	              created (s), by (the worker that began it)
//	P:seen:B      a set of integers: the seen URLs whose fingerprint's top
//	              16 bits are B, each its low 48 bits (an intset: 8 bytes
//	              a URL)
//	P:seencount   how many URLs were admitted (for MaxItems; a crawl of
//	              several shards is done when two rounds find them all
//	              empty and admitting none between)
//	P:q:HOST      a list: HOST's queued URLs, "DEPTH[+] URL" ("+": a
//	              Gopher+ item)
//	P:ready       a sorted set: the hosts with URLs queued and a slot
//	              free, each by the time (ms) it may next be asked
//	P:h:HOST      a hash: HOST's leased, next (ms), queued, settled,
//	              failed, excluded
//	P:hosts       a set of every host
//	P:stats       a hash: queued, leased, settled, failed, excluded
//	P:token       the last fencing token given
//	P:leases      a hash: token -> "CID WORKER\nHOST\nITEM", CID the
//	              claim's ID, so that a claim asked again after its reply
//	              was lost finds the lease it made
//	P:expiry      a sorted set: tokens by the time (ms) they expire
//	P:again       a list: "HOST\nITEM" of the items left unsettled (a
//	              failure that may pass), queued again when a worker starts
//	P:robots      a hash: robots.txt URL -> its rules, JSON
//	P:w:WORKER    a hash: the worker's WARC files -> where its settled
//	              records end (-1: none)
//	P:ws:WORKER   a hash: the tokens the worker settled last, by token
//	              mod 128, so that a settle asked again is known for one
//
// Times are the store's own (TIME), so that workers whose clocks differ
// keep one host's pace.

// common are the functions the scripts share, after the check that the
// crawl the worker opened is the one in the store. KEYS[1] is P:crawl,
// ARGV[1] the crawl's id.
const common = `
local p = string.sub(KEYS[1], 1, -7)
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then
  return redis.error_reply('NOCRAWL the crawl record ' .. KEYS[1] .. ' is gone')
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function ready(host, perhost)
  local hk = p .. ':h:' .. host
  local q = redis.call('LLEN', p .. ':q:' .. host)
  local leased = tonumber(redis.call('HGET', hk, 'leased') or '0')
  if q > 0 and leased < perhost then
    local nx = tonumber(redis.call('HGET', hk, 'next') or '0')
    redis.call('ZADD', p .. ':ready', nx, host)
  else
    redis.call('ZREM', p .. ':ready', host)
  end
end

-- split reads a lease: its claim ID, worker, host and item.
local function split(s)
  local a, b = string.find(s, '\n', 1, true)
  local c, d = string.find(s, '\n', b + 1, true)
  local w = string.sub(s, 1, a - 1)
  local sp = string.find(w, ' ', 1, true)
  return string.sub(w, 1, sp - 1), string.sub(w, sp + 1), string.sub(s, b + 1, c - 1), string.sub(s, d + 1)
end

-- giveback ends the lease tok, l its value, and queues its item again at
-- the front of its host's queue.
local function giveback(tok, l, perhost)
  redis.call('HDEL', p .. ':leases', tok)
  redis.call('ZREM', p .. ':expiry', tok)
  local _, _, host, item = split(l)
  local hk = p .. ':h:' .. host
  redis.call('LPUSH', p .. ':q:' .. host, item)
  redis.call('HINCRBY', hk, 'leased', -1)
  redis.call('HINCRBY', hk, 'queued', 1)
  redis.call('HINCRBY', p .. ':stats', 'leased', -1)
  redis.call('HINCRBY', p .. ':stats', 'queued', 1)
  ready(host, perhost)
end

local function reap(perhost)
  local gone = redis.call('ZRANGEBYSCORE', p .. ':expiry', '-inf', now, 'LIMIT', 0, 100)
  for _, tok in ipairs(gone) do
    local l = redis.call('HGET', p .. ':leases', tok)
    redis.call('ZREM', p .. ':expiry', tok)
    if l then
      giveback(tok, l, perhost)
    end
  end
  return #gone
end

-- admit queues the link "BUCKET MEMBER HOST\nITEM" unless seen, or past
-- max admitted; it says 1 when it was queued.
local function admit(link, perhost, maxitems)
  local s1 = string.find(link, ' ', 1, true)
  local s2 = string.find(link, ' ', s1 + 1, true)
  local nl = string.find(link, '\n', s2 + 1, true)
  local bucket = string.sub(link, 1, s1 - 1)
  local member = string.sub(link, s1 + 1, s2 - 1)
  local host = string.sub(link, s2 + 1, nl - 1)
  local item = string.sub(link, nl + 1)
  if redis.call('SISMEMBER', p .. ':seen:' .. bucket, member) == 1 then
    return 0
  end
  if maxitems > 0 and tonumber(redis.call('GET', p .. ':seencount') or '0') >= maxitems then
    return 0
  end
  redis.call('SADD', p .. ':seen:' .. bucket, member)
  redis.call('INCR', p .. ':seencount')
  redis.call('RPUSH', p .. ':q:' .. host, item)
  redis.call('SADD', p .. ':hosts', host)
  redis.call('HINCRBY', p .. ':h:' .. host, 'queued', 1)
  redis.call('HINCRBY', p .. ':stats', 'queued', 1)
  ready(host, perhost)
  return 1
end
`

// addScript: ARGV id, perhost, maxitems, links... Returns a string of "0"
// and "1", one a link.
var addScript = script(common + `
local perhost = tonumber(ARGV[2])
local maxitems = tonumber(ARGV[3])
local out = {}
for i = 4, #ARGV do
  out[#out + 1] = tostring(admit(ARGV[i], perhost, maxitems))
end
return table.concat(out)
`)

// claimScript: ARGV id, worker, perhost, wait (ms), ttl (ms), claim ID,
// asked again ("1": the last asking's reply was lost; the leases, as
// many as the transfers under way, are looked through for its ID).
// Returns {0, admitted} when nothing is queued nor leased, {1, ms} when
// nothing may be claimed for ms, {2, token, host, item, expires (ms)} for
// a lease: the one this claim ID made, if it made one and it is held.
var claimScript = script(common + `
local worker = ARGV[2]
local perhost = tonumber(ARGV[3])
local wait = tonumber(ARGV[4])
local ttl = tonumber(ARGV[5])
local cid = ARGV[6]
if ARGV[7] == '1' then
  local all = redis.call('HGETALL', p .. ':leases')
  for i = 1, #all, 2 do
    if string.sub(all[i + 1], 1, #cid + 1) == cid .. ' ' then
      local _, _, host, item = split(all[i + 1])
      return {2, tonumber(all[i]), host, item, tonumber(redis.call('ZSCORE', p .. ':expiry', all[i]))}
    end
  end
end
reap(perhost)
local h = redis.call('ZRANGEBYSCORE', p .. ':ready', '-inf', now, 'LIMIT', 0, 1)
if #h == 0 then
  local st = redis.call('HMGET', p .. ':stats', 'queued', 'leased')
  if tonumber(st[1] or '0') <= 0 and tonumber(st[2] or '0') <= 0 then
    return {0, tonumber(redis.call('GET', p .. ':seencount') or '0')}
  end
  local soonest = 1000
  local r = redis.call('ZRANGE', p .. ':ready', 0, 0, 'WITHSCORES')
  if #r > 0 then soonest = math.min(soonest, tonumber(r[2]) - now) end
  local e = redis.call('ZRANGE', p .. ':expiry', 0, 0, 'WITHSCORES')
  if #e > 0 then soonest = math.min(soonest, tonumber(e[2]) - now) end
  return {1, math.max(soonest, 1)}
end
local host = h[1]
local hk = p .. ':h:' .. host
local item = redis.call('LPOP', p .. ':q:' .. host)
if not item then
  redis.call('ZREM', p .. ':ready', host)
  return {1, 1}
end
-- One write a hash, not one a field: each write is also the replicas'
-- and the append-only file's.
local hv = redis.call('HMGET', hk, 'leased', 'queued')
redis.call('HSET', hk, 'leased', tonumber(hv[1] or '0') + 1, 'queued', tonumber(hv[2] or '0') - 1, 'next', now + wait)
local sv = redis.call('HMGET', p .. ':stats', 'leased', 'queued')
redis.call('HSET', p .. ':stats', 'leased', tonumber(sv[1] or '0') + 1, 'queued', tonumber(sv[2] or '0') - 1)
ready(host, perhost)
local tok = redis.call('INCR', p .. ':token')
redis.call('HSET', p .. ':leases', tok, cid .. ' ' .. worker .. '\n' .. host .. '\n' .. item)
redis.call('ZADD', p .. ':expiry', now + ttl, tok)
return {2, tok, host, item, now + ttl}
`)

// extendScript: ARGV id, token, ttl (ms), worker, item. Returns the new
// expiry (ms), or -1 for a lease no longer held (by that worker, of that
// item: a store failed over may give a token again).
var extendScript = script(common + `
local l = redis.call('HGET', p .. ':leases', ARGV[2])
if not l then
  return -1
end
local _, worker, _, item = split(l)
if worker ~= ARGV[4] or item ~= ARGV[5] then
  return -1
end
redis.call('ZADD', p .. ':expiry', now + tonumber(ARGV[3]), ARGV[2])
return now + tonumber(ARGV[3])
`)

// settleScript: ARGV id, token, kind (settled, failed, excluded, again),
// perhost, wait (ms), maxitems, worker, file, at, item, links... Returns
// -1 for a lease no longer held (by that worker, of that item), -2 for
// one this worker settled already (a settle asked again after its reply
// was lost: it changes nothing), else the string of "0" and "1" add
// returns.
var settleScript = script(common + `
local tok = ARGV[2]
local kind = ARGV[3]
local perhost = tonumber(ARGV[4])
local wait = tonumber(ARGV[5])
local maxitems = tonumber(ARGV[6])
local l = redis.call('HGET', p .. ':leases', tok)
local ring = p .. ':ws:' .. ARGV[7]
local slot = tostring(tonumber(tok) % 128)
local cid, worker, host, item
if l then
  cid, worker, host, item = split(l)
end
if not l or worker ~= ARGV[7] or item ~= ARGV[10] then
  if redis.call('HGET', ring, slot) == tok then
    return -2
  end
  return -1
end
redis.call('HSET', ring, slot, tok)
redis.call('HDEL', p .. ':leases', tok)
redis.call('ZREM', p .. ':expiry', tok)
local hk = p .. ':h:' .. host
-- One write a hash, as in the claim.
local hv = redis.call('HMGET', hk, 'leased', 'next', kind)
local sv = redis.call('HMGET', p .. ':stats', 'leased', kind)
local hf = {'leased', tonumber(hv[1] or '0') - 1}
local sf = {'leased', tonumber(sv[1] or '0') - 1}
if now + wait > tonumber(hv[2] or '0') then
  table.insert(hf, 'next')
  table.insert(hf, now + wait)
end
if kind ~= 'again' then
  table.insert(hf, kind)
  table.insert(hf, tonumber(hv[3] or '0') + 1)
  table.insert(sf, kind)
  table.insert(sf, tonumber(sv[2] or '0') + 1)
end
redis.call('HSET', hk, unpack(hf))
redis.call('HSET', p .. ':stats', unpack(sf))
local out = {}
if kind == 'again' then
  redis.call('RPUSH', p .. ':again', host .. '\n' .. item)
else
  if ARGV[8] ~= '' then
    redis.call('HSET', p .. ':w:' .. ARGV[7], ARGV[8], ARGV[9])
  end
  for i = 11, #ARGV do
    out[#out + 1] = tostring(admit(ARGV[i], perhost, maxitems))
  end
end
ready(host, perhost)
return table.concat(out)
`)

// againScript: ARGV id, perhost, worker. Queues the items left unsettled
// again, at the front of their hosts' queues, and gives back the leases
// of the worker's name, whose process is gone since one starts under it;
// returns how many.
var againScript = script(common + `
local perhost = tonumber(ARGV[2])
local n = 0
local leases = redis.call('HGETALL', p .. ':leases')
for i = 1, #leases, 2 do
  local _, worker = split(leases[i + 1])
  if worker == ARGV[3] then
    giveback(leases[i], leases[i + 1], perhost)
    n = n + 1
  end
end
while true do
  local item = redis.call('RPOP', p .. ':again')
  if not item then break end
  local nl = string.find(item, '\n', 1, true)
  local host = string.sub(item, 1, nl - 1)
  redis.call('LPUSH', p .. ':q:' .. host, string.sub(item, nl + 1))
  redis.call('HINCRBY', p .. ':h:' .. host, 'queued', 1)
  redis.call('HINCRBY', p .. ':stats', 'queued', 1)
  ready(host, perhost)
  n = n + 1
end
return n
`)

// reapScript: ARGV id, perhost. Returns how many leases it gave back.
var reapScript = script(common + `
return reap(tonumber(ARGV[2]))
`)

// recordScript: KEYS[1] P:crawl; ARGV id, shards, by. Writes the crawl's
// record unless there is one; returns the record's id and shards.
var recordScript = sync.OnceValue(func() *redis.Script {
	return redis.NewScript(`#!lua
if redis.call('EXISTS', KEYS[1]) == 0 then
  local t = redis.call('TIME')
  redis.call('HSET', KEYS[1], 'id', ARGV[1], 'shards', ARGV[2], 'created', t[1], 'by', ARGV[3])
end
return redis.call('HMGET', KEYS[1], 'id', 'shards')
`)
})
