// Keys of samples in the filtration's order, shared by the kernels that order voxels by value
// (the ECC's histograms, the Morse-Smale gradient). They match src/field/sample.rs's to_key.
#pragma once

// Larger than every narrow key: NaN samples, and the collar outside the grid.
#define ABSENT 0x7fffffff
#define ULL_MAX 0xffffffffffffffffull

// Keys in the filtration's order. Narrow integer types: the value as an int, bitwise NOT for
// superlevel sets. Wide types (u32, i32, f32, f64): an unsigned 64-bit key whose order is the
// values' (floats: -0.0 folded into +0.0, sign-magnitude bits made monotone), bitwise NOT (of
// the 32 or 64 bits) for superlevel sets; NaN is ABSENT. These match src/field/sample.rs.
template <typename T> struct Keys;
#define NARROW_KEYS(T)                                                                             \
    template <> struct Keys<T> {                                                                   \
        typedef int K;                                                                             \
        static __device__ __forceinline__ K absent() { return ABSENT; }                           \
        static __device__ __forceinline__ K key(T v, bool sup) { return sup ? ~(int)v : (int)v; } \
    };
NARROW_KEYS(unsigned char)
NARROW_KEYS(signed char)
NARROW_KEYS(unsigned short)
NARROW_KEYS(short)
template <> struct Keys<unsigned int> {
    typedef unsigned long long K;
    static __device__ __forceinline__ K absent() { return ULL_MAX; }
    static __device__ __forceinline__ K key(unsigned int v, bool sup) { return sup ? (K)(~v) : (K)v; }
};
template <> struct Keys<int> {
    typedef unsigned long long K;
    static __device__ __forceinline__ K absent() { return ULL_MAX; }
    static __device__ __forceinline__ K key(int v, bool sup) {
        const unsigned o = (unsigned)v ^ 0x80000000u;
        return sup ? (K)(~o) : (K)o;
    }
};
template <> struct Keys<float> {
    typedef unsigned long long K;
    static __device__ __forceinline__ K absent() { return ULL_MAX; }
    static __device__ __forceinline__ K key(float v, bool sup) {
        if (v != v) return ULL_MAX;
        const unsigned b = __float_as_uint(__fadd_rn(v, 0.0f));
        const unsigned o = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
        return sup ? (K)(~o) : (K)o;
    }
};
template <> struct Keys<double> {
    typedef unsigned long long K;
    static __device__ __forceinline__ K absent() { return ULL_MAX; }
    static __device__ __forceinline__ K key(double v, bool sup) {
        if (v != v) return ULL_MAX;
        const unsigned long long b = (unsigned long long)__double_as_longlong(__dadd_rn(v, 0.0));
        const unsigned long long o = (b >> 63) ? ~b : (b | 0x8000000000000000ull);
        return sup ? ~o : o;
    }
};
