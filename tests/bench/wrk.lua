-- Load for the flashcards API. BENCH_* come from the environment:
--   BENCH_MODE "review" (POST /api/v1/reviews) or "next" (GET /api/v1/study/next)
--   BENCH_TOKENS a file of API tokens, one per user, line i = user i
--   BENCH_CARDS  a file of card ids
--   BENCH_CARD_OFFSET where in the card list this run starts (default 0), so that successive
--     runs answer cards not answered yet, as real users do, not the same rows again
-- Requests walk users first, so consecutive requests (and the 8 connections) hit different
-- users: a card is almost never answered twice at once. Review ids are random UUIDs.
local mode = os.getenv("BENCH_MODE")
--   or "ceiling" (GET /item/<id> of the bare Flask app, ids 1-10000)
local tokens, cards = {}, {}
local card_offset = tonumber(os.getenv("BENCH_CARD_OFFSET") or "0")
if mode ~= "ceiling" then
  for line in io.lines(os.getenv("BENCH_TOKENS")) do tokens[#tokens + 1] = line end
  for line in io.lines(os.getenv("BENCH_CARDS")) do cards[#cards + 1] = tonumber(line) end
end

local threads, thread_count = {}, 0
function setup(thread)
  thread:set("tid", thread_count)
  thread_count = thread_count + 1
  table.insert(threads, thread)
end

local counter = 0
local ratings = {3, 3, 4, 2, 3, 1}
-- Each thread seeds from the kernel: seeds made of the time in seconds plus the CPU clock in
-- microseconds repeated across runs a few seconds apart (when the clocks differed by the same
-- few microseconds), replaying an earlier run's review ids, which the server rightly refuses.
local function kernel_seed()
  local urandom = assert(io.open("/dev/urandom", "rb"))
  local b1, b2, b3, b4 = urandom:read(4):byte(1, 4)
  urandom:close()
  return ((b1 * 256 + b2) * 256 + b3) * 256 + b4
end

function init(args)
  math.randomseed(kernel_seed())
  counter = 0
  statuses = {}
end

local function uuid4()
  return (string.gsub("xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx", "[xy]", function(c)
    local v = (c == "x") and math.random(0, 15) or math.random(8, 11)
    return string.format("%x", v)
  end))
end

function request()
  local i = counter * 2 + (tid or 0)
  counter = counter + 1
  if mode == "ceiling" then
    return wrk.format("GET", "/item/" .. (i % 10000 + 1))
  end
  local user = i % #tokens
  local headers = {["Authorization"] = "Bearer " .. tokens[user + 1]}
  if mode == "next" then
    return wrk.format("GET", "/api/v1/study/next", headers)
  end
  local card = cards[((math.floor(i / #tokens) + card_offset) % #cards) + 1]
  headers["Content-Type"] = "application/json"
  local body = string.format('{"card_id":%d,"rating":%d,"review_id":"%s"}',
    card, ratings[(counter % #ratings) + 1], uuid4())
  return wrk.format("POST", "/api/v1/reviews", headers, body)
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local totals = {}
  for _, thread in ipairs(threads) do
    local s = thread:get("statuses")
    for code, n in pairs(s) do totals[code] = (totals[code] or 0) + n end
  end
  local parts = {}
  for code, n in pairs(totals) do parts[#parts + 1] = code .. "=" .. n end
  io.write("STATUSES " .. table.concat(parts, " ") .. "\n")
end
