#define __device__
#define __global__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __launch_bounds__(x)
#define __shared__ static
struct D3 { unsigned x, y, z; };
static D3 blockIdx, threadIdx, gridDim, blockDim;
template <class T> inline T __ldg(const T* p) { return *p; }
inline double __shfl_down_sync(unsigned, double v, int) { return v; }
inline float __shfl_down_sync(unsigned, float v, int) { return v; }
inline void __syncthreads() {}
inline void __threadfence() {}
template <class T> inline T atomicAdd(T* p, T v) { T o = *p; *p += v; return o; }
inline unsigned atomicInc(unsigned* p, unsigned v) { return (*p)++; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
template <class T> inline T __ldcg(const T* p) { return *p; }
#include <cmath>
using std::isfinite;
