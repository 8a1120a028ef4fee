#include "sim/common/flags.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/common/csv.h"

namespace hived::sim {

FlagParser::FlagParser(std::string command, std::string synopsis, std::string description)
    : command_(std::move(command)),
      synopsis_(std::move(synopsis)),
      description_(std::move(description)) {}

void FlagParser::String(std::string name, std::string* out, std::string value_name,
                        std::string help) {
  flags_.push_back({std::move(name), Kind::kString, out, std::move(value_name), std::move(help)});
}
void FlagParser::Int(std::string name, int64_t* out, std::string help) {
  flags_.push_back({std::move(name), Kind::kInt, out, "N", std::move(help)});
}
void FlagParser::Double(std::string name, double* out, std::string help) {
  flags_.push_back({std::move(name), Kind::kDouble, out, "X", std::move(help)});
}
void FlagParser::Bool(std::string name, bool* out, std::string help) {
  flags_.push_back({std::move(name), Kind::kBool, out, "", std::move(help)});
}

std::string FlagParser::Usage() const {
  std::string out = absl::StrCat("usage: ", command_, " ", synopsis_, "\n\n", description_, "\n");
  if (!flags_.empty()) out += "\noptions:\n";
  for (const Flag& f : flags_) {
    std::string left = absl::StrCat("  --", f.name, f.value_name.empty() ? "" : " ", f.value_name);
    if (left.size() < 30) {
      out += absl::StrFormat("%-30s %s\n", left, f.help);
    } else {
      out += absl::StrFormat("%s\n%-30s %s\n", left, "", f.help);
    }
  }
  out += absl::StrFormat("%-30s %s\n", "  --help", "print this help");
  out +=
      "\nexit codes: 0 ok; 1 run failed, accounting mismatch or bad input; 2 bad command "
      "line\n";
  return out;
}

bool FlagParser::Given(std::string_view name) const {
  return std::find(given_.begin(), given_.end(), name) != given_.end();
}

int FlagParser::UsageError(std::string_view message) const {
  std::fprintf(stderr, "%s: %.*s\nRun '%s --help' for usage.\n", command_.c_str(),
               static_cast<int>(message.size()), message.data(), command_.c_str());
  return kExitUsage;
}

bool FlagParser::Set(const Flag& flag, std::string_view value, std::string* error) {
  switch (flag.kind) {
    case Kind::kString:
      *static_cast<std::string*>(flag.out) = std::string(value);
      return true;
    case Kind::kInt: {
      auto v = ParseInt(value);
      if (!v) {
        // Digits that do not fit are out of range, not "not an integer".
        const std::string_view digits = !value.empty() && value[0] == '-' ? value.substr(1) : value;
        const bool too_large =
            !digits.empty() &&
            std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
        *error = absl::StrCat(
            "--", flag.name,
            too_large ? " is out of range (a 64-bit integer), got '" : " needs an integer, got '",
            Av(value), "'");
        return false;
      }
      *static_cast<int64_t*>(flag.out) = *v;
      return true;
    }
    case Kind::kDouble: {
      auto v = ParseDouble(value);
      if (!v) {
        *error = absl::StrCat("--", flag.name, " needs a number, got '", Av(value), "'");
        return false;
      }
      *static_cast<double*>(flag.out) = *v;
      return true;
    }
    case Kind::kBool:
      if (value == "true" || value == "1") {
        *static_cast<bool*>(flag.out) = true;
      } else if (value == "false" || value == "0") {
        *static_cast<bool*>(flag.out) = false;
      } else {
        *error = absl::StrCat("--", flag.name, " takes true or false, got '", Av(value), "'");
        return false;
      }
      return true;
  }
  return false;
}

int FlagParser::Parse(int argc, char** argv, std::vector<std::string>* positional) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(Usage().c_str(), stdout);
      return kExitOk;
    }
    if (arg == "--") {
      for (++i; i < argc; ++i) positional->emplace_back(argv[i]);
      break;
    }
    if (arg.size() < 3 || arg.substr(0, 2) != "--") {
      positional->emplace_back(arg);
      continue;
    }
    std::string_view name = arg.substr(2);
    std::string_view value;
    bool has_value = false;
    if (size_t eq = name.find('='); eq != std::string_view::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    const Flag* flag = nullptr;
    for (const Flag& f : flags_) {
      if (f.name == name) flag = &f;
    }
    if (!flag) return UsageError(absl::StrCat("unknown option --", Av(name)));
    if (!has_value) {
      if (flag->kind == Kind::kBool) {
        value = "true";
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        return UsageError(absl::StrCat("--", Av(name), " needs a value"));
      }
    }
    std::string error;
    if (!Set(*flag, value, &error)) return UsageError(error);
    given_.emplace_back(name);
  }
  return -1;
}

}  // namespace hived::sim
