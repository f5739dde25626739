-- wrk script of `npm run loadtest`: every request gets its own client address (X-Forwarded-For
-- from 198.18.0.0/15, the RFC 2544 benchmark range) and the next path of a list written by
-- scripts/loadtest.ts, so cold scenarios never repeat a request. Thread i of n walks the list
-- from its i/n mark on, so every thread sends the list's mix (taking paths i, i + n, ... gave
-- one thread of two every odd path: a mix with every tenth path cold had one thread all cold
-- and the other all cached); the list wraps around when a run outlasts it. done() prints one
-- JSON line.
--   wrk -s loadtest.lua URL -- <paths file> <threads>

local threads = {}
local ADDRESSES = 131072 -- 198.18.0.0/15

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

local paths = {}
local count = 0
local step = 1
local start = 0
statuses = {}

function init(args)
  for line in io.lines(args[1]) do
    paths[#paths + 1] = line
  end
  step = tonumber(args[2])
  if #paths == 0 then error("no paths in " .. args[1]) end
  start = math.floor(id * #paths / step)
end

function request()
  -- Addresses interleave across threads, so no two requests of a run share one.
  local a = (count * step + id) % ADDRESSES
  local n = start + count
  count = count + 1
  local address = "198." .. (18 + math.floor(a / 65536)) .. "." .. (math.floor(a / 256) % 256) .. "." .. (a % 256)
  return wrk.format(nil, paths[(n % #paths) + 1], { ["X-Forwarded-For"] = address })
end

function response(status)
  statuses[status] = (statuses[status] or 0) + 1
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
      .. '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f},"statuses":{%s}}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean,
    table.concat(codes, ",")))
end
