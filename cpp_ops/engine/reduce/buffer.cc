#include "reduce/buffer.h"

#include <cstring>

namespace wagma {

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = std::move(other.data_);
    size_ = other.size_;
    pool_ = other.pool_;
    other.size_ = 0;
  }
  return *this;
}

void Buffer::Release() {
  if (data_ && pool_) pool_->Give(std::move(data_), size_);
  data_.reset();
  size_ = 0;
}

Buffer BufferPool::Take(size_t size) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(size);
    if (it != free_.end()) {
      std::unique_ptr<char[]> data = std::move(it->second);
      free_.erase(it);
      cached_bytes_ -= size;
      return Buffer(std::move(data), size, this);
    }
  }
  return Buffer(std::unique_ptr<char[]>(new char[size > 0 ? size : 1]), size, this);
}

Buffer BufferPool::Copy(const void* src, size_t size) {
  Buffer b = Take(size);
  if (size) std::memcpy(b.data(), src, size);
  return b;
}

void BufferPool::Give(std::unique_ptr<char[]> data, size_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cached_bytes_ + size > max_cached_bytes_) return;  // frees data
  cached_bytes_ += size;
  free_.emplace(size, std::move(data));
}

}  // namespace wagma
