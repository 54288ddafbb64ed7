// Buffer: an uninitialised byte array that returns itself to a BufferPool.
//
// Rounds allocate contribution, scratch and result buffers of the same sizes step
// after step; recycling them avoids a page-fault storm per round on large models.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace wagma {

class BufferPool;

class Buffer {
 public:
  Buffer() = default;
  Buffer(std::unique_ptr<char[]> data, size_t size, BufferPool* pool)
      : data_(std::move(data)), size_(size), pool_(pool) {}
  Buffer(Buffer&&) noexcept = default;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { Release(); }

  char* data() { return data_.get(); }
  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return !data_; }

 private:
  void Release();
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  BufferPool* pool_ = nullptr;
};

class BufferPool {
 public:
  explicit BufferPool(size_t max_cached_bytes) : max_cached_bytes_(max_cached_bytes) {}
  Buffer Take(size_t size);
  Buffer Copy(const void* src, size_t size);

 private:
  friend class Buffer;
  void Give(std::unique_ptr<char[]> data, size_t size);
  std::mutex mu_;
  std::multimap<size_t, std::unique_ptr<char[]>> free_;
  size_t cached_bytes_ = 0;
  size_t max_cached_bytes_;
};

}  // namespace wagma
