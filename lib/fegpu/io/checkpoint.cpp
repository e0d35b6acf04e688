#include "fegpu/io/checkpoint.hpp"

#include "fegpu/core/error.hpp"
#include "fegpu/io/output_files.hpp"

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fegpu {

namespace {

// The file, all integers 64-bit little-endian (the machines we run on):
//   header:  magic "FEGPUCKP", format version, file size, entry count, checksum of these four words
//   entries: kind, name length, count, checksum of the payload, name bytes padded to 8, checksum
//            of these words and the name, payload (count 8-byte words; a string's bytes padded to 8)
//   trailer: checksum of everything before it
// Every entry carries its own checksums so that damage is named where it is; the trailer's covers
// the order and number of entries. The reader checks the size and every checksum before it
// believes any count, so no damaged file reaches the run (exit 2 instead).
constexpr char kMagic[8] = {'F', 'E', 'G', 'P', 'U', 'C', 'K', 'P'};
constexpr std::uint64_t kVersion = 2;
enum Kind : std::uint64_t { kReals = 1, kIntegers = 2, kNumber = 3, kString = 4 };

/// A 64-bit checksum of bytes, xxHash64's construction (four lanes of multiply-rotate rounds over
/// 32-byte stripes, then a mix of the tail): a few GB/s, and any change of a byte changes it but
/// with chance 2^-64.
std::uint64_t checksum(const void *data, std::size_t n) {
  constexpr std::uint64_t P1 = 0x9E3779B185EBCA87ull, P2 = 0xC2B2AE3D27D4EB4Full, P3 = 0x165667B19E3779F9ull,
                          P4 = 0x85EBCA77C2B2AE63ull, P5 = 0x27D4EB2F165667C5ull;
  const auto *p = static_cast<const unsigned char *>(data);
  const unsigned char *const end = p + n;
  const auto word = [](const unsigned char *q) {
    std::uint64_t w;
    std::memcpy(&w, q, 8);
    return w;
  };
  const auto rotl = [](std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); };
  const auto round = [&](std::uint64_t acc, std::uint64_t w) { return rotl(acc + w * P2, 31) * P1; };
  const auto merge = [&](std::uint64_t h, std::uint64_t acc) { return (h ^ round(0, acc)) * P1 + P4; };
  std::uint64_t h;
  if (n >= 32) {
    std::uint64_t v1 = P1 + P2, v2 = P2, v3 = 0, v4 = 0 - P1;
    for (; p + 32 <= end; p += 32) {
      v1 = round(v1, word(p));
      v2 = round(v2, word(p + 8));
      v3 = round(v3, word(p + 16));
      v4 = round(v4, word(p + 24));
    }
    h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
    h = merge(merge(merge(merge(h, v1), v2), v3), v4);
  } else {
    h = P5;
  }
  h += n;
  for (; p + 8 <= end; p += 8)
    h = rotl(h ^ round(0, word(p)), 27) * P1 + P4;
  for (; p < end; ++p)
    h = rotl(h ^ (*p * P5), 11) * P1;
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  return h ^ (h >> 32);
}

std::size_t padded(std::size_t bytes) { return (bytes + 7) / 8 * 8; }

/// The file's bytes, built in memory and written at once.
class Image {
public:
  void word(std::uint64_t w) { bytes(&w, 8); }
  void bytes(const void *p, std::size_t n) {
    const auto *c = static_cast<const char *>(p);
    data_.insert(data_.end(), c, c + n);
    data_.resize(padded(data_.size()), '\0');
  }
  std::uint64_t checksum_from(std::size_t begin) const { return checksum(data_.data() + begin, size() - begin); }
  std::size_t size() const { return data_.size(); }
  void set_word(std::size_t at, std::uint64_t w) { std::memcpy(data_.data() + at, &w, 8); }
  const char *data() const { return data_.data(); }

  void entry(Kind kind, const std::string &name, std::uint64_t count, const void *payload, std::size_t bytes_) {
    const std::size_t begin = size();
    word(kind);
    word(name.size());
    word(count);
    word(checksum(payload, bytes_));
    bytes(name.data(), name.size());
    word(checksum_from(begin)); // of the four words and the name
    bytes(payload, bytes_);
  }

private:
  std::vector<char> data_;
};

/// Writes all of `data` to a new file `partial` and makes it durable; RunError naming `path`.
void write_durably(const std::string &partial, const std::string &path, const char *data, std::size_t n) {
  const auto failed = [&](const char *what) {
    const int e = errno;
    throw RunError("cannot write the checkpoint '" + path + "' (" + what + "): " + std::strerror(e));
  };
  const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) failed("open");
  struct Closer {
    int fd;
    ~Closer() {
      if (fd >= 0) ::close(fd);
    }
  } closer{fd};
  for (std::size_t done = 0; done < n;) {
    const ssize_t k = ::write(fd, data + done, n - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) failed("write");
    done += std::size_t(k);
  }
  // On disk before the rename makes it the checkpoint: a machine that fails just after must not
  // leave a named checkpoint whose blocks never reached the disk.
  if (::fsync(fd) != 0) failed("fsync");
  closer.fd = -1;
  if (::close(fd) != 0) failed("close");
}

} // namespace

void CheckpointWriter::put(const std::string &name, std::vector<double> values) { reals_[name] = std::move(values); }
void CheckpointWriter::put(const std::string &name, std::vector<std::int64_t> values) {
  integers_[name] = std::move(values);
}

void CheckpointWriter::write(const std::string &path) const {
  Image image;
  image.bytes(kMagic, 8);
  image.word(kVersion);
  image.word(0); // the file's size, set below
  image.word(reals_.size() + integers_.size() + numbers_.size() + strings_.size());
  image.word(0); // the header's checksum, set below
  for (const auto &[name, v] : reals_)
    image.entry(kReals, name, v.size(), v.data(), v.size() * 8);
  for (const auto &[name, v] : integers_)
    image.entry(kIntegers, name, v.size(), v.data(), v.size() * 8);
  for (const auto &[name, v] : numbers_)
    image.entry(kNumber, name, 1, &v, 8);
  for (const auto &[name, v] : strings_)
    image.entry(kString, name, v.size(), v.data(), v.size());
  image.set_word(16, image.size() + 8);
  std::uint64_t head[4];
  std::memcpy(head, image.data(), 32);
  image.set_word(32, checksum(head, 32));
  image.word(image.checksum_from(0));

  make_parent_folders(path);
  const std::string partial = path + ".partial";
  try {
    write_durably(partial, path, image.data(), image.size());
  } catch (...) {
    std::remove(partial.c_str()); // nothing half written stays behind
    throw;
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    std::remove(partial.c_str());
    throw RunError("cannot write the checkpoint '" + path + "': the rename from '" + partial + "' failed");
  }
}

CheckpointReader::CheckpointReader(const std::string &path) : path_(path) {
  const auto damaged = [&](const std::string &what) {
    throw InputError("the checkpoint '" + path + "' is damaged or not a checkpoint: " + what);
  };
  std::vector<char> file;
  {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      const int e = errno;
      if (fd >= 0) ::close(fd);
      throw InputError("cannot read the checkpoint '" + path + "' (" +
                       (fd >= 0 ? std::string("not a file") : std::strerror(e)) + ")");
    }
    file.resize(std::size_t(st.st_size));
    std::size_t done = 0;
    while (done < file.size()) {
      const ssize_t k = ::read(fd, file.data() + done, file.size() - done);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) break;
      done += std::size_t(k);
    }
    ::close(fd);
    if (done != file.size()) damaged("it could not be read whole");
  }
  const std::size_t n = file.size();
  const auto word = [&](std::size_t at) {
    std::uint64_t w;
    std::memcpy(&w, file.data() + at, 8);
    return w;
  };
  if (n < 48 || std::memcmp(file.data(), kMagic, 8) != 0) damaged("no checkpoint mark at its start");
  if (checksum(file.data(), 32) != word(32)) damaged("its header fails its checksum");
  if (word(8) != kVersion)
    throw InputError("the checkpoint '" + path + "' is of format version " + std::to_string(word(8)) +
                     "; this fegpu-kk reads version " + std::to_string(kVersion));
  if (word(16) != n)
    damaged(std::string(word(16) > n ? "truncated: " : "longer than written: ") + std::to_string(n) + " of " +
            std::to_string(word(16)) + " bytes");
  const std::uint64_t entries = word(24);
  std::size_t at = 40;
  for (std::uint64_t e = 0; e < entries; ++e) {
    if (at + 40 > n - 8) damaged("entry " + std::to_string(e) + " lies past its end");
    const std::uint64_t kind = word(at), name_len = word(at + 8), count = word(at + 16), sum = word(at + 24);
    if (name_len > n || count > n || at + 40 + padded(name_len) > n - 8) damaged("entry " + std::to_string(e));
    const std::size_t described = at + 32 + padded(name_len);
    if (checksum(file.data() + at, described - at) != word(described))
      damaged("the description of entry " + std::to_string(e) + " fails its checksum");
    const std::string name(file.data() + at + 32, name_len);
    const std::uint64_t bytes = kind == kString ? count : count * 8;
    at = described + 8;
    if (at + padded(bytes) > n - 8) damaged("'" + name + "' lies past its end");
    const char *payload = file.data() + at;
    if (checksum(payload, bytes) != sum) damaged("'" + name + "' fails its checksum");
    at += padded(bytes);
    switch (kind) {
    case kReals:
      reals_[name].resize(count);
      std::memcpy(reals_[name].data(), payload, bytes);
      break;
    case kIntegers:
      integers_[name].resize(count);
      std::memcpy(integers_[name].data(), payload, bytes);
      break;
    case kNumber:
      if (count != 1) damaged("'" + name + "' is no number");
      std::memcpy(&numbers_[name], payload, 8);
      break;
    case kString:
      strings_[name].assign(payload, bytes);
      break;
    default:
      damaged("'" + name + "' is of no known kind");
    }
  }
  if (at != n - 8 || checksum(file.data(), n - 8) != word(n - 8)) damaged("the whole fails its checksum");
}

void set_identity(CheckpointWriter &w, const RunIdentity &identity) {
  w.set("run.module", identity.module);
  w.set("run.fingerprint", identity.fingerprint);
}

void check_identity(const CheckpointReader &r, const RunIdentity &identity) {
  if (r.string("run.module") != identity.module)
    r.mismatch("it was written by physics: " + r.string("run.module") + ", this input runs " + identity.module);
  if (r.string("run.fingerprint") != identity.fingerprint)
    r.mismatch("it was written for an input that differs from this one outside its time and output sections "
               "(mesh, materials, conditions, loads or solver)");
}

bool CheckpointReader::has(const std::string &name) const {
  return reals_.count(name) || integers_.count(name) || numbers_.count(name) || strings_.count(name);
}

void CheckpointReader::mismatch(const std::string &what) const {
  throw InputError("the checkpoint '" + path_ + "' does not fit this run: " + what);
}

const std::vector<double> &CheckpointReader::reals(const std::string &name) const {
  const auto it = reals_.find(name);
  if (it == reals_.end()) mismatch("it has no '" + name + "'");
  return it->second;
}

const std::vector<std::int64_t> &CheckpointReader::integers(const std::string &name) const {
  const auto it = integers_.find(name);
  if (it == integers_.end()) mismatch("it has no '" + name + "'");
  return it->second;
}

double CheckpointReader::number(const std::string &name) const {
  const auto it = numbers_.find(name);
  if (it == numbers_.end()) mismatch("it has no '" + name + "'");
  return it->second;
}

const std::string &CheckpointReader::string(const std::string &name) const {
  const auto it = strings_.find(name);
  if (it == strings_.end()) mismatch("it has no '" + name + "'");
  return it->second;
}

} // namespace fegpu
