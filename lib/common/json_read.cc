#include "common/json_read.h"

#include <cmath>
#include <istream>
#include <streambuf>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"

namespace rdmabench {

using nlohmann::json;

namespace {

[[noreturn]] void fail(std::string_view what, std::string_view key, const std::string& problem) {
  throw ProtocolError(fmt::format("{}: field \"{}\" {}", what, escapeForLog(key, 64), problem));
}

std::string shortValue(const json& v) {
  return escapeForLog(v.dump(-1, ' ', false, json::error_handler_t::replace), 40);
}

// Exact integral value of a JSON number as long double-free pieces: returns false when `v` is not
// a number or not integral. Sets `neg` and the magnitude.
bool integralParts(const json& v, bool& neg, uint64_t& mag, bool& tooLarge) {
  tooLarge = false;
  if (v.is_number_unsigned()) {
    neg = false;
    mag = v.get<uint64_t>();
    return true;
  }
  if (v.is_number_integer()) {
    int64_t i = v.get<int64_t>();
    neg = i < 0;
    mag = neg ? uint64_t(0) - static_cast<uint64_t>(i) : static_cast<uint64_t>(i);
    return true;
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (!std::isfinite(d) || std::floor(d) != d) return false;
    neg = d < 0;
    double a = std::fabs(d);
    // 2^64 as a double; compare before the cast so the conversion is always defined.
    if (a >= 18446744073709551616.0) {
      tooLarge = true;
      mag = std::numeric_limits<uint64_t>::max();
      return true;
    }
    mag = static_cast<uint64_t>(a);
    return true;
  }
  return false;
}

}  // namespace

json parseUntrustedJson(std::string_view text, std::string_view what, size_t maxDepth,
                        size_t maxBytes) {
  if (text.size() > maxBytes)
    throw ProtocolError(fmt::format("{}: {} bytes of JSON exceed the limit of {} bytes", what,
                                    text.size(), maxBytes));
  // nlohmann's parser keeps its own stack (no recursion on the input); the callback refuses
  // nesting before the DOM grows deep, so nothing later (copy, dump, destruction) recurses far.
  auto limit = [&](int depth, json::parse_event_t event, json&) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        static_cast<size_t>(depth) + 1 > maxDepth)
      throw ProtocolError(
          fmt::format("{}: JSON nests deeper than the limit of {} levels", what, maxDepth));
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), limit, /*allow_exceptions=*/true,
                       /*ignore_comments=*/false);
  } catch (const json::exception& e) {
    throw ProtocolError(fmt::format("{}: not valid JSON ({})", what, escapeForLog(e.what(), 160)));
  }
}

namespace {

// Reads from another stream buffer and throws once more than `max` bytes came through.
class LimitedBuf : public std::streambuf {
 public:
  LimitedBuf(std::streambuf* src, size_t max, std::string_view what)
      : src_(src), max_(max), what_(what) {}

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (!src_) return traits_type::eof();
    std::streamsize n = src_->sgetn(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    if (n <= 0) return traits_type::eof();
    total_ += static_cast<size_t>(n);
    if (total_ > max_)
      throw ProtocolError(fmt::format("{}: more than the limit of {} bytes of JSON", what_, max_));
    setg(buf_.data(), buf_.data(), buf_.data() + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  std::streambuf* src_;
  size_t max_;
  size_t total_ = 0;
  std::string what_;
  std::vector<char> buf_ = std::vector<char>(65536);
};

}  // namespace

json parseUntrustedJsonStream(std::istream& in, std::string_view what,
                              const JsonStreamCallback& onValue, size_t maxDepth, size_t maxBytes) {
  struct Frame {
    bool array;
    std::string key;  // current member name (objects)
  };
  std::vector<Frame> open;        // enclosing containers
  std::vector<std::string> path;  // member names down to the current value
  // The path of a value whose parent is open.back(): objects add the member name.
  auto valuePath = [&]() -> std::span<const std::string> {
    path.clear();
    for (const Frame& f : open)
      if (!f.array) path.push_back(f.key);
    return path;
  };
  auto report = [&](const json& value) {
    if (open.empty()) return true;  // the top-level value itself
    JsonStreamValue v{open.size(), valuePath(), open.back().array, value};
    return onValue(v);
  };
  auto callback = [&](int depth, json::parse_event_t event, json& parsed) -> bool {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (static_cast<size_t>(depth) + 1 > maxDepth)
          throw ProtocolError(
              fmt::format("{}: JSON nests deeper than the limit of {} levels", what, maxDepth));
        open.push_back({event == json::parse_event_t::array_start, {}});
        return true;
      case json::parse_event_t::key:
        if (!open.empty() && parsed.is_string()) open.back().key = parsed.get<std::string>();
        return true;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!open.empty()) open.pop_back();
        return report(parsed);
      case json::parse_event_t::value:
        return report(parsed);
    }
    return true;
  };
  LimitedBuf limited(in.rdbuf(), maxBytes, what);
  std::istream stream(&limited);
  try {
    return json::parse(stream, callback, /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const json::exception& e) {
    throw ProtocolError(fmt::format("{}: not valid JSON ({})", what, escapeForLog(e.what(), 160)));
  }
}

const json* jsonFind(const json& obj, std::string_view key, std::string_view what) {
  if (!obj.is_object())
    throw ProtocolError(fmt::format("{}: expected a JSON object, got {}", what, obj.type_name()));
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

uint64_t jsonUint(const json& obj, std::string_view key, std::string_view what, uint64_t def,
                  uint64_t min, uint64_t max) {
  const json* v = jsonFind(obj, key, what);
  if (!v) return def;
  bool neg = false, tooLarge = false;
  uint64_t mag = 0;
  if (!integralParts(*v, neg, mag, tooLarge))
    fail(what, key, fmt::format("must be a whole number, got {}", shortValue(*v)));
  if ((neg && mag != 0) || tooLarge || mag < min || mag > max)
    fail(what, key, fmt::format("= {} is out of range [{}, {}]", shortValue(*v), min, max));
  return mag;
}

int64_t jsonInt(const json& obj, std::string_view key, std::string_view what, int64_t def,
                int64_t min, int64_t max) {
  const json* v = jsonFind(obj, key, what);
  if (!v) return def;
  bool neg = false, tooLarge = false;
  uint64_t mag = 0;
  if (!integralParts(*v, neg, mag, tooLarge))
    fail(what, key, fmt::format("must be a whole number, got {}", shortValue(*v)));
  constexpr uint64_t kMaxPos = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  bool fits = !tooLarge && (neg ? mag <= kMaxPos + 1 : mag <= kMaxPos);
  int64_t value = 0;
  if (fits)
    value = neg ? (mag == kMaxPos + 1 ? std::numeric_limits<int64_t>::min()
                                      : -static_cast<int64_t>(mag))
                : static_cast<int64_t>(mag);
  if (!fits || value < min || value > max)
    fail(what, key, fmt::format("= {} is out of range [{}, {}]", shortValue(*v), min, max));
  return value;
}

double jsonDouble(const json& obj, std::string_view key, std::string_view what, double def,
                  double min, double max) {
  const json* v = jsonFind(obj, key, what);
  if (!v) return def;
  if (!v->is_number()) fail(what, key, fmt::format("must be a number, got {}", shortValue(*v)));
  double d = v->get<double>();
  if (!std::isfinite(d) || d < min || d > max)
    fail(what, key, fmt::format("= {} is out of range [{}, {}]", shortValue(*v), min, max));
  return d;
}

bool jsonBool(const json& obj, std::string_view key, std::string_view what, bool def) {
  const json* v = jsonFind(obj, key, what);
  if (!v) return def;
  if (!v->is_boolean())
    fail(what, key, fmt::format("must be true or false, got {}", shortValue(*v)));
  return v->get<bool>();
}

std::string jsonString(const json& obj, std::string_view key, std::string_view what,
                       std::string_view def, size_t maxBytes) {
  const json* v = jsonFind(obj, key, what);
  if (!v) return std::string(def);
  if (!v->is_string()) fail(what, key, fmt::format("must be a string, got {}", shortValue(*v)));
  const std::string& s = v->get_ref<const std::string&>();
  if (s.size() > maxBytes)
    fail(what, key, fmt::format("is {} bytes long, limit {} bytes", s.size(), maxBytes));
  return s;
}

const json* jsonArray(const json& obj, std::string_view key, std::string_view what,
                      size_t maxItems) {
  const json* v = jsonFind(obj, key, what);
  if (!v) return nullptr;
  if (!v->is_array()) fail(what, key, fmt::format("must be an array, got {}", v->type_name()));
  if (v->size() > maxItems)
    fail(what, key, fmt::format("has {} items, limit {}", v->size(), maxItems));
  return v;
}

const json* jsonObject(const json& obj, std::string_view key, std::string_view what) {
  const json* v = jsonFind(obj, key, what);
  if (!v) return nullptr;
  if (!v->is_object()) fail(what, key, fmt::format("must be an object, got {}", v->type_name()));
  return v;
}

}  // namespace rdmabench
