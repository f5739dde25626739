-- wrk script of `npm run loadtest`: every request gets its own client address (X-Forwarded-For
-- from 198.18.0.0/15, the RFC 2544 benchmark range) and the next path of a list written by
-- scripts/loadtest.ts, so cold scenarios never repeat a request. Thread i of n walks the list
-- from its i/n mark on, so every thread sends the list's mix (taking paths i, i + n, ... gave
-- one thread of two every odd path: a mix with every tenth path cold had one thread all cold
-- and the other all cached); the list wraps around when a run outlasts it.
--
-- Timed requests carry their start in X-Request-Id, which the service echoes, so each answer's
-- latency is known by path: with a marker, the paths holding it are a class of their own (a
-- mix's p99 says little without its classes' own).
--
-- LOADTEST_RATE (requests/s in all, from the environment: wrk looks for delay() before init)
-- paces the run: request k of a thread is due at start + k / (rate / threads), a connection
-- that answered waits for the next due time, and latency counts from the due time, not from
-- the send (wrk2's way: a late server does not hide its queue by delaying the requests).
-- Otherwise every connection sends again the moment it is answered (a closed loop).
--
-- done() prints one JSON line.
--   [LOADTEST_RATE=n] wrk -s loadtest.lua URL -- <paths file> <threads> [marker]

local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } loadtest_timespec;
  int clock_gettime(int clock, loadtest_timespec *t);
]]
local now_ts = ffi.new("loadtest_timespec")
local function now_us()
  ffi.C.clock_gettime(1, now_ts) -- CLOCK_MONOTONIC
  return tonumber(now_ts.tv_sec) * 1000000 + tonumber(now_ts.tv_nsec) / 1000
end

local threads = {}
local ADDRESSES = 131072 -- 198.18.0.0/15
local RATE = tonumber(os.getenv("LOADTEST_RATE") or "")

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

local paths = {}
local count = 0
local step = 1
local start = 0
local marker = nil
local timed = RATE ~= nil
statuses = {}
-- Latencies (us) of timed answers, by class.
marked = {}
unmarked = {}

-- Pacing: the due times claimed by delay() and not yet sent, oldest first.
local interval_us = 0
local first_due = nil
local claimed = 0
local due = {}
local due_head = 1

function init(args)
  for line in io.lines(args[1]) do
    paths[#paths + 1] = line
  end
  step = tonumber(args[2])
  if #paths == 0 then error("no paths in " .. args[1]) end
  start = math.floor(id * #paths / step)
  if args[3] and args[3] ~= "" then
    marker = args[3]
    timed = true
  end
  if RATE then interval_us = 1000000 * step / RATE end
end

if RATE then
  -- Called when a connection has its answer: it claims the thread's next due time and waits for it.
  function delay()
    local now = now_us()
    first_due = first_due or now
    local at = first_due + claimed * interval_us
    claimed = claimed + 1
    due[#due + 1] = at
    return math.max(0, math.ceil((at - now) / 1000))
  end
end

-- Where the latency of the request about to go out counts from: its due time (the oldest
-- claimed: timers fire in due order) when it leaves more than the timer's 1 ms grain after it,
-- else now; now for a connection's first request.
local function due_time()
  local now = now_us()
  local at = due[due_head]
  if not at then return now end
  due[due_head] = nil
  due_head = due_head + 1
  return now - at > 1000 and at or now
end

function request()
  -- Addresses interleave across threads, so no two requests of a run share one.
  local a = (count * step + id) % ADDRESSES
  local n = start + count
  count = count + 1
  local address = "198." .. (18 + math.floor(a / 65536)) .. "." .. (math.floor(a / 256) % 256) .. "." .. (a % 256)
  local path = paths[(n % #paths) + 1]
  local headers = { ["X-Forwarded-For"] = address }
  -- wrk.format takes these instead of wrk.headers: the command line's -H ones (an API key) are added.
  for name, value in pairs(wrk.headers) do
    if headers[name] == nil then headers[name] = value end
  end
  if timed then
    local class = marker and string.find(path, marker, 1, true) and "m" or "u"
    headers["X-Request-Id"] = string.format("lt-%s-%d", class, RATE and due_time() or now_us())
  end
  return wrk.format(nil, path, headers)
end

function response(status, headers)
  statuses[status] = (statuses[status] or 0) + 1
  if timed then
    local class, sent = string.match(headers["X-Request-Id"] or headers["x-request-id"] or "", "^lt%-(%a)%-(%d+)$")
    if class then
      local list = class == "m" and marked or unmarked
      list[#list + 1] = now_us() - tonumber(sent)
    end
  end
end

-- {requests, p50, p90, p99} (us) of every thread's latencies in the named lists, or null when
-- none (done() runs in the main script, where init() never ran: the threads' lists say it all).
local function class_json(...)
  local all = {}
  for _, name in ipairs({ ... }) do
    for _, thread in ipairs(threads) do
      for _, us in ipairs(thread:get(name) or {}) do all[#all + 1] = us end
    end
  end
  if #all == 0 then return "null" end
  table.sort(all)
  local at = function(p) return all[math.max(1, math.ceil(#all * p))] end
  return string.format('{"requests":%d,"p50":%d,"p90":%d,"p99":%d}', #all, at(0.5), at(0.9), at(0.99))
end

function done(summary, latency, requests)
  local merged = {}
  for _, thread in ipairs(threads) do
    for code, n in pairs(thread:get("statuses")) do
      merged[code] = (merged[code] or 0) + n
    end
  end
  local codes = {}
  for code, n in pairs(merged) do
    codes[#codes + 1] = string.format('"%d":%d', code, n)
  end
  local e = summary.errors
  io.write(string.format(
    'LOADTEST_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},'
      .. '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f},"statuses":{%s},"timed":%s,"marked":%s,"unmarked":%s}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean,
    table.concat(codes, ","), class_json("marked", "unmarked"), class_json("marked"), class_json("unmarked")))
end
