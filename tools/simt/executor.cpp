/* The SIMT executor: CUDA's execution model on the CPU, for the C tests of the kernels.
 *
 * Blocks run one after another, in a random order. Within a block every CUDA thread is a fiber
 * (fiber.h) with its own stack; a seeded random scheduler switches fibers at barriers,
 * collectives and, at random, at memory accesses, so that the interleavings between barriers
 * vary with the seed. What it checks, each reported as a defect that ends the launch:
 *   - sync_block: a barrier over the live threads of the block; threads waiting at barriers of
 *     different places (a barrier in divergent code; a place is the file and line of the call)
 *     and deadlocks are reported, not hung on, and so is a block that spins without end;
 *   - warp collectives: meeting points of the live lanes of the mask (exited lanes take no part,
 *     as on sm_70 and later); two lanes that each name the other but wait at collectives of
 *     another kind, mask or width, a caller outside its mask, and a shuffle from a lane outside
 *     the mask or exited are reported;
 *   - memory: device memory (sim_alloc) and the block's shared memory are arenas with a shadow
 *     cell per 8 bytes: which bytes are addressable (red zones around each allocation, freed
 *     memory), which were ever written (fresh allocations and shared memory are filled with a
 *     non-zero pattern, as cudaMalloc does not zero memory; reading bytes never written is
 *     reported), the last plain write, the last atomic and two reads, with the thread and the
 *     ordering epoch of each. Two threads touching one address, at least one writing, with no
 *     barrier or sync_warp between them, are a race (atomics do not race with each other). A
 *     kernel that touches memory that is neither device, shared, its own stack nor the program's
 *     read-only data (a host pointer, a host variable) is reported, and so is host code that
 *     touches device memory; a prefetch of memory that is not addressable device memory, and a
 *     16-byte load or store (simt::load16, store16) at an address not aligned to 16 bytes, are
 *     reported;
 *   - launch limits: at most 1024 threads a block (x, y <= 1024, z <= 64), grid y and z at most
 *     65535, static shared memory at most 48 KB, static and dynamic together above 48 KB only for
 *     a kernel opted in (allow_shared), up to the target's limit (227 KB, sm_90).
 * Memory accesses reach the executor through GCC's ThreadSanitizer instrumentation: the test
 * programs are compiled with -fsanitize=thread but linked without its runtime, and the __tsan_*
 * hooks are defined here. This file itself is not instrumented.
 *
 * What it cannot show: timing, coalescing, occupancy, bank conflicts, or memory-model effects
 * weaker than its sequentially consistent interleavings (a race is reported instead). Its shadow
 * keeps one write per 8 bytes, so of two threads' writes to neighbouring bytes the second
 * replaces the first's record (no false report, a race on the first may go unseen); memcpy and
 * memset in a kernel are not seen (GCC folds or calls them uninstrumented): kernels copy by
 * assignment. Nor is a structure a function returns stored in place (`p[i] = f(...)` where GCC
 * does not inline f: it instruments no call's result), so that a later read of it is reported as
 * uninitialised: such a result goes through a local first.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "fiber.h"
#include "simt.cuh"

namespace simt_cpu {

/* ---- reports -------------------------------------------------------------------------------- */

static std::vector<std::string> defects;

/* "function at file:line" of a code address, by addr2line (only when reporting). */
static std::string where(const void *pc) {
  Dl_info info;
  if (!pc || !dladdr(pc, &info) || !info.dli_fname) return "?";
  char cmd[600], out[400] = "";
  snprintf(cmd, sizeof cmd, "addr2line -Cfpi -e '%s' 0x%lx 2>/dev/null", info.dli_fname,
           (unsigned long)((uintptr_t)pc - 1 - (uintptr_t)info.dli_fbase));
  FILE *f = popen(cmd, "r");
  if (f) {
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = 0;
    pclose(f);
  }
  out[strcspn(out, "\n")] = 0; /* the innermost frame's line */
  /* the innermost function, without its arguments, at file:line without the directory */
  std::string s = out;
  s = s.substr(0, s.find(" (inlined by)"));
  size_t at = s.find(" at "), paren = s.find('(');
  if (at == std::string::npos) return s.empty() ? "?" : s;
  std::string fn = s.substr(0, paren < at ? paren : at), file = s.substr(at + 4);
  size_t slash = file.rfind('/');
  return fn + " at " + (slash == std::string::npos ? file : file.substr(slash + 1));
}

/* ---- memory: arenas and shadow ---------------------------------------------------------------- */

/* Tokens name an access's thread and epoch. 0: never written; 1: written by the host (ordered
 * before every kernel). Tokens from launch_base on are this launch's, in the table `tokens`. */
enum : uint32_t { TOKEN_NONE = 0, TOKEN_HOST = 1, TOKEN_FIRST = 2 };

struct token_rec {
  uint32_t block, tid, warp, lane, epoch, clock;
  int atomic;
  const void *pc;
  const char *file; /* atomics: the call */
  int line;
};

/* A span of an arena: an allocation (device) or a shared array (shared). */
struct region {
  size_t off, bytes;
  int live;
};

/* Memory with a shadow cell per 8 bytes, reserved at once and taken only as touched. Regions are
 * carved one after another and the arena is reset when none is live. */
struct arena {
  char *base;
  void *shadow;
  size_t size, used;
  std::vector<region> regions;
  explicit arena(size_t bytes);
  bool contains(const void *p) const { return (uintptr_t)p - (uintptr_t)base < size; }
};

/* The shadow of 8 bytes: bit b of a mask stands for byte b. */
struct cell {
  uint32_t w, aw;     /* the last plain write, the last atomic */
  uint32_t r1, r2;    /* the last read, and one of another warp or block before it */
  uint8_t wm, awm, m1, m2; /* the bytes each touched */
  uint8_t init, acc;  /* bytes written at least once; bytes addressable */
};

arena::arena(size_t bytes) : size(bytes), used(0) {
  base = (char *)mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  shadow = mmap(NULL, size / 8 * sizeof(cell), PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED || shadow == MAP_FAILED) {
    fprintf(stderr, "simt: cannot reserve %zu bytes of simulated memory\n", size);
    abort();
  }
}

static inline cell *cell_at(arena &a, size_t off) { return (cell *)a.shadow + off / 8; }

/* The bits of the bytes of [off, off + n) in each cell, whole cells at once. */
template <class Mark>
static void each_cell(arena &a, size_t off, size_t n, Mark mark) {
  for (size_t i = off; i < off + n;) {
    size_t first = i % 8, last = (off + n - 1) / 8 == i / 8 ? (off + n - 1) % 8 : 7;
    mark(cell_at(a, i), (uint8_t)(((1u << (last - first + 1)) - 1) << first));
    i = (i / 8 + 1) * 8;
  }
}

/* Marks [off, off + n) addressable and fresh (never written), and fills it with the pattern. */
static void mark_fresh(arena &a, size_t off, size_t n, int pattern) {
  memset(a.base + off, pattern, n);
  each_cell(a, off, n, [](cell *c, uint8_t m) { c->acc |= m, c->init &= (uint8_t)~m; });
}

static void mark_gone(arena &a, size_t off, size_t n) {
  each_cell(a, off, n, [](cell *c, uint8_t m) { c->acc &= (uint8_t)~m; });
}

static void mark_host_written(arena &a, size_t off, size_t n) {
  each_cell(a, off, n, [](cell *c, uint8_t m) {
    c->init |= m;
    c->w = TOKEN_HOST, c->aw = c->r1 = c->r2 = TOKEN_NONE;
    c->wm = 0xff, c->awm = c->m1 = c->m2 = 0;
  });
}

/* Up to this many bytes of shadow a reset clears in place: handing the pages back cost a fault
 * each when they were touched again (every block resets the shared arena), and the TLB
 * shootdowns of madvise, about a sixth of an executor test's time. */
#define RESET_IN_PLACE ((size_t)4 << 20)

static void reset(arena &a) {
  if (a.used == 0) return;
  size_t shadow_bytes = (a.used / 8 + 1) * sizeof(cell);
  if (shadow_bytes <= RESET_IN_PLACE) { /* the data need no clearing: mark_fresh fills a region */
    memset(a.shadow, 0, shadow_bytes);
  } else {
    madvise(a.base, a.used, MADV_DONTNEED);
    madvise(a.shadow, (shadow_bytes + 4095) & ~(size_t)4095, MADV_DONTNEED);
  }
  a.used = 0;
  a.regions.clear();
}

#define REDZONE 256

/* A region of [used + REDZONE, ...) aligned to 256 bytes, as cudaMalloc aligns. */
static size_t carve(arena &a, size_t bytes, size_t align) {
  size_t off = (a.used + REDZONE + align - 1) / align * align;
  if (off + bytes + REDZONE > a.size) return (size_t)-1;
  a.used = off + bytes + REDZONE;
  a.regions.push_back(region{off, bytes, 1});
  return off;
}

static const region *region_of(const arena &a, size_t off) {
  const region *best = NULL;
  for (const region &r : a.regions)
    if (r.off <= off + REDZONE && (!best || r.off > best->off)) best = &r;
  return best;
}

static std::string describe(const arena &a, const char *kind, size_t off) {
  const region *r = region_of(a, off);
  char s[160];
  if (!r) snprintf(s, sizeof s, "%s memory at offset %zu (no allocation)", kind, off);
  else if (off < r->off) snprintf(s, sizeof s, "%zu bytes before %s allocation #%zu (%zu bytes%s)",
                                  r->off - off, kind, (size_t)(r - a.regions.data()), r->bytes, r->live ? "" : ", freed");
  else if (off >= r->off + r->bytes) snprintf(s, sizeof s, "%zu bytes past the end of %s allocation #%zu (%zu bytes%s)",
                                              off - r->off - r->bytes, kind, (size_t)(r - a.regions.data()), r->bytes, r->live ? "" : ", freed");
  else snprintf(s, sizeof s, "byte %zu of %s allocation #%zu (%zu bytes%s)", off - r->off, kind,
                (size_t)(r - a.regions.data()), r->bytes, r->live ? "" : ", freed");
  return s;
}

/* Device memory: 8 GiB of address space, taken only as touched; and one block's shared memory
 * (blocks run one at a time). Made before main, so that the hooks need no check. */
static arena device_arena((size_t)1 << 33), shared_arena((size_t)1 << 20);
static inline arena &device() { return device_arena; }
static inline arena &shared() { return shared_arena; }

/* ---- threads, blocks and the scheduler --------------------------------------------------------- */

enum thread_state { RUNNABLE, AT_BARRIER, AT_COLLECTIVE, EXITED };

struct pending {
  collective_kind kind;
  unsigned mask;
  uint64_t value;
  int arg, width;
  const char *file;
  int line;
};

struct sim_thread {
  fiber ctx;
  size_t pos; /* in the block's runnable list */
  char *stack;
  dim3 idx;
  unsigned tid, lane, warp;
  thread_state state;
  int in_kernel;
  const char *file; /* the barrier or collective waited at */
  int line;
  pending coll;
  uint64_t result;
  uint32_t clock[SIMT_WARP]; /* the warp's vector clock as this thread knows it */
  uint32_t token, atomic_token;
};

#define STACK_BYTES ((size_t)320 << 10)
#define STACK_GUARD ((size_t)64 << 10)
#define MAX_THREADS 1024
#define STATIC_SHARED_LIMIT ((size_t)48 << 10)
#define DEFAULT_SHARED_LIMIT ((size_t)48 << 10)

struct shared_decl {
  const void *key;
  size_t off;
};

struct block_state {
  const launch_config *cfg;
  dim3 idx;
  uint32_t linear, epoch;
  unsigned nthreads, live, at_barrier;
  sim_thread threads[MAX_THREADS];
  std::vector<unsigned> runnable;
  std::vector<shared_decl> statics;
  size_t static_bytes, dynamic_off;
  int failed;
  std::string message;
};

static block_state *blk;
static fiber scheduler;
static __thread sim_thread *cur;
static uint64_t rng;
static uint32_t launch_base = TOKEN_FIRST;
static std::vector<token_rec> tokens;
static char *stacks[MAX_THREADS];
static unsigned preempt_one_in = 8;

static uint64_t next_random() { /* xorshift64* */
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 2685821657736338717ull;
}

static std::string thread_name(const sim_thread *t) {
  char s[120];
  snprintf(s, sizeof s, "block (%u,%u,%u) thread (%u,%u,%u)", blk->idx.x, blk->idx.y, blk->idx.z,
           t->idx.x, t->idx.y, t->idx.z);
  return s;
}

static void make_runnable(sim_thread *t) {
  t->state = RUNNABLE;
  t->pos = blk->runnable.size();
  blk->runnable.push_back(t->tid);
}

static void drop_runnable(sim_thread *t) {
  std::vector<unsigned> &r = blk->runnable;
  unsigned last = r.back();
  r[t->pos] = last;
  blk->threads[last].pos = t->pos;
  r.pop_back();
}

/* Back to the scheduler; returns when the scheduler resumes this thread. */
static void yield_to_scheduler() {
  sim_thread *t = cur;
  fiber_switch(&t->ctx, &scheduler);
}

/* Ends the launch with a defect: the scheduler abandons every fiber of the block. */
[[noreturn]] static void fail(const std::string &what) {
  if (!blk->failed) {
    blk->failed = 1;
    blk->message = what;
  }
  if (cur) {
    cur->state = EXITED;
    fiber_switch(&cur->ctx, &scheduler);
  }
  abort(); /* not reached: a failed block's fibers are never resumed */
}

static void failf(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void failf(const char *fmt, ...) {
  char s[2000];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s, sizeof s, fmt, ap);
  va_end(ap);
  fail(s);
}

static void new_epoch(sim_thread *t) { t->token = t->atomic_token = TOKEN_NONE; }

/* ---- memory checks ----------------------------------------------------------------------------- */

static uint32_t token_for(sim_thread *t, int atomic, const void *pc, const char *file, int line) {
  uint32_t &slot = atomic ? t->atomic_token : t->token;
  if (slot != TOKEN_NONE && !atomic) return slot;
  token_rec r = {blk->linear, t->tid, t->warp, t->lane, blk->epoch, t->clock[t->lane], atomic, pc, file, line};
  tokens.push_back(r);
  if ((uint64_t)launch_base + tokens.size() > UINT32_MAX) {
    fprintf(stderr, "simt: out of access tokens\n");
    abort();
  }
  return slot = launch_base + (uint32_t)tokens.size() - 1;
}

/* Whether the access of token k is ordered before the current access of t. */
static int ordered(uint32_t k, const sim_thread *t) {
  if (k < launch_base) return 1;
  const token_rec &r = tokens[k - launch_base];
  if (r.block != blk->linear) return 0;
  if (r.tid == t->tid) return 1;
  if (r.epoch < blk->epoch) return 1;
  return r.warp == t->warp && t->clock[r.lane] > r.clock;
}

static std::string access_name(uint32_t k, int write) {
  const token_rec &r = tokens[k - launch_base];
  char s[200];
  const char *what = r.atomic ? "an atomic" : write ? "a write" : "a read";
  unsigned x = r.tid % blk->cfg->block.x, y = r.tid / blk->cfg->block.x % blk->cfg->block.y,
           z = r.tid / (blk->cfg->block.x * blk->cfg->block.y);
  if (r.block == blk->linear) snprintf(s, sizeof s, "%s by thread (%u,%u,%u) of the same block", what, x, y, z);
  else snprintf(s, sizeof s, "%s by thread (%u,%u,%u) of block #%u", what, x, y, z, r.block);
  std::string out = s;
  out += r.atomic ? std::string(" at ") + r.file + ":" + std::to_string(r.line) : " at " + where(r.pc);
  return out;
}

static void report_access(const char *problem, arena &a, const char *kind, size_t off, size_t n,
                          int write, const void *pc, const std::string &other) {
  failf("%s: %s of %zu bytes at %s, by %s, in kernel %s at %s%s%s", problem, write ? "write" : "read", n,
        describe(a, kind, off).c_str(), thread_name(cur).c_str(), blk->cfg->name, where(pc).c_str(),
        other.empty() ? "" : ", racing with ", other.c_str());
}

/* Forgets the bytes m of a read record, and the record when no byte is left. */
static inline void forget(uint32_t *r, uint8_t *rm, uint8_t m) {
  *rm &= (uint8_t)~m;
  if (!*rm) *r = TOKEN_NONE;
}

/* Checks and records an access of n bytes at offset off of arena a: a plain read or write, or an
 * atomic (which reads the old value unless `reads` is 0, as an exchange whose result is unused).
 * Plain accesses race with unordered plain writes and atomics, writes also with unordered reads;
 * atomics with unordered plain accesses only. */
static void check_access(arena &a, const char *kind, size_t off, size_t n, int write, int atomic,
                         int reads, const void *pc, const char *file, int line) {
  sim_thread *t = cur;
  uint32_t tok = token_for(t, atomic, pc, file, line);
  int any_init = 0;
  each_cell(a, off, n, [&](cell *c, uint8_t m) {
    size_t i = (size_t)(c - (cell *)a.shadow) * 8 + (size_t)__builtin_ctz(m); /* the first byte */
    if ((c->acc & m) != m) report_access("out of bounds", a, kind, i, n, write, pc, "");
    any_init |= (c->init & m) != 0;
    if (c->w != TOKEN_NONE && (c->wm & m) && !ordered(c->w, t))
      report_access("race", a, kind, i, n, write, pc, access_name(c->w, 1));
    if (!atomic && c->aw != TOKEN_NONE && (c->awm & m) && !ordered(c->aw, t))
      report_access("race", a, kind, i, n, write, pc, access_name(c->aw, 1));
    if (write) {
      if ((c->m1 & m) && c->r1 != TOKEN_NONE && !ordered(c->r1, t))
        report_access("race", a, kind, i, n, write, pc, access_name(c->r1, 0));
      if ((c->m2 & m) && c->r2 != TOKEN_NONE && !ordered(c->r2, t))
        report_access("race", a, kind, i, n, write, pc, access_name(c->r2, 0));
      c->init |= m;
      if (atomic) {
        c->aw = tok, c->awm = m;
      } else {
        c->w = tok, c->wm = m;
        forget(&c->aw, &c->awm, m);
        forget(&c->r1, &c->m1, m);
        forget(&c->r2, &c->m2, m);
      }
    } else if (c->r1 == tok) {
      c->m1 |= m;
    } else {
      const token_rec *o = c->r1 >= launch_base ? &tokens[c->r1 - launch_base] : NULL;
      /* a read of the same warp stands for the one it replaces; one of another is kept */
      if (o && (o->block != blk->linear || o->warp != t->warp)) c->r2 = c->r1, c->m2 = c->m1;
      c->r1 = tok, c->m1 = m;
    }
  });
  /* bytes partly written are taken as a value with padding; none written is a fresh read */
  if ((!write || (atomic && reads)) && !any_init)
    report_access("uninitialised read", a, kind, off, n, 0, pc, "");
}

/* The program's read-only segments (its constants), which kernels may read. */
struct span {
  uintptr_t from, to;
};
static std::vector<span> constants;

static int add_constants(struct dl_phdr_info *info, size_t, void *) {
  if (info->dlpi_name && info->dlpi_name[0]) return 0; /* the main program only */
  for (int k = 0; k < info->dlpi_phnum; k++) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[k];
    if ((ph.p_type == PT_LOAD && !(ph.p_flags & PF_W)) || ph.p_type == PT_GNU_RELRO)
      constants.push_back(span{info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz});
  }
  return 1;
}

static int is_constant(uintptr_t u, size_t n) {
  if (constants.empty()) dl_iterate_phdr(add_constants, NULL);
  for (const span &c : constants)
    if (u >= c.from && u + n <= c.to) return 1;
  return 0;
}

static void kernel_access(const void *p, size_t n, int write, int atomic, int reads, const void *pc,
                          const char *file, int line) {
  sim_thread *t = cur;
  arena &d = device(), &s = shared();
  uintptr_t u = (uintptr_t)p;
  if (d.contains(p)) check_access(d, "device", u - (uintptr_t)d.base, n, write, atomic, reads, pc, file, line);
  else if (s.contains(p)) check_access(s, "shared", u - (uintptr_t)s.base, n, write, atomic, reads, pc, file, line);
  else if (u >= (uintptr_t)t->stack && u + n <= (uintptr_t)t->stack + STACK_BYTES) return;
  else if (!write && is_constant(u, n)) return;
  else
    failf("a %s of %zu bytes at %p, which is not device memory (a host pointer?), by %s, in kernel "
          "%s at %s", write ? "write" : "read", n, p, thread_name(t).c_str(), blk->cfg->name,
          where(pc).c_str());
  if (next_random() % preempt_one_in == 0) {
    blk->runnable.size() > 1 ? yield_to_scheduler() : (void)0;
  }
}

static void host_access(const void *p, size_t n, int write, const void *pc) {
  arena &d = device();
  if (!d.contains(p)) return;
  static std::mutex one_at_a_time; /* host code may run on OpenMP threads */
  std::lock_guard<std::mutex> lock(one_at_a_time);
  char s[600];
  snprintf(s, sizeof s, "host code %s %zu bytes of device memory (%s) at %s: use the executor's copies",
           write ? "wrote" : "read", n, describe(d, "device", (uintptr_t)p - (uintptr_t)d.base).c_str(),
           where(pc).c_str());
  defects.push_back(s);
}

static inline void on_access(const void *p, size_t n, int write, const void *pc) {
  sim_thread *t = cur;
  if (!t) host_access(p, n, write, pc);
  else if (t->in_kernel) kernel_access(p, n, write, 0, !write, pc, NULL, 0);
}

/* ---- the layer's calls ------------------------------------------------------------------------- */

static sim_thread *me(const char *what) {
  if (!cur || !cur->in_kernel) {
    fprintf(stderr, "simt: %s called outside a kernel\n", what);
    abort();
  }
  return cur;
}

dim3 thread_idx() { return me("threadIdx")->idx; }
dim3 block_idx() { return me("blockIdx"), blk->idx; }
dim3 block_dim() { return me("blockDim"), blk->cfg->block; }
dim3 grid_dim() { return me("gridDim"), blk->cfg->grid; }
unsigned thread_rank() { return me("thread_rank")->tid; }

static void try_barrier() {
  block_state *b = blk;
  if (b->at_barrier == 0 || b->at_barrier < b->live) return;
  const sim_thread *first = NULL;
  for (unsigned i = 0; i < b->nthreads; i++) {
    const sim_thread *t = &b->threads[i];
    if (t->state != AT_BARRIER) continue;
    if (!first) first = t;
    else if (t->line != first->line || strcmp(t->file, first->file) != 0)
      failf("divergent barrier in kernel %s: %s waits at the barrier at %s:%d, %s at the one at %s:%d",
            b->cfg->name, thread_name(first).c_str(), first->file, first->line, thread_name(t).c_str(),
            t->file, t->line);
  }
  b->epoch++;
  b->at_barrier = 0;
  for (unsigned i = 0; i < b->nthreads; i++) {
    sim_thread *t = &b->threads[i];
    if (t->state == AT_BARRIER) make_runnable(t), new_epoch(t);
  }
}

void barrier(const char *file, int line) {
  sim_thread *t = me("sync_block");
  t->state = AT_BARRIER;
  t->file = file, t->line = line;
  drop_runnable(t);
  blk->at_barrier++;
  try_barrier();
  yield_to_scheduler();
}

static const char *collective_names[] = {"sync_warp", "shfl", "shfl_up", "shfl_down",
                                         "shfl_xor",  "ballot", "any",   "all"};

/* Lanes meet when they call the same kind of collective with the same mask and width; on
 * sm_70 and later the calls need not be the same instruction. */
static int same_collective(const pending &a, const pending &b) {
  return a.kind == b.kind && a.mask == b.mask && a.width == b.width;
}

static sim_thread *lane_thread(unsigned warp, unsigned lane) {
  unsigned tid = warp * SIMT_WARP + lane;
  return tid < blk->nthreads ? &blk->threads[tid] : NULL;
}

/* The source lane of lane l's shuffle, or l itself where CUDA returns the caller's value. */
static unsigned shuffle_source(const pending &p, unsigned l) {
  unsigned w = (unsigned)p.width, base = l & ~(w - 1), in = l & (w - 1);
  switch (p.kind) {
  case C_SHFL: return base + ((unsigned)p.arg & (w - 1));
  case C_SHFL_UP: return in >= (unsigned)p.arg ? l - (unsigned)p.arg : l;
  case C_SHFL_DOWN: return in + (unsigned)p.arg < w ? l + (unsigned)p.arg : l;
  default: { unsigned s = l ^ (unsigned)p.arg; return s < base + w ? s : l; } /* xor */
  }
}

static int live(const sim_thread *o) { return o && o->state != EXITED; }

/* The collective of the lanes of p.mask that have not exited (CUDA's participants). */
static void complete_collective(unsigned warp, const pending &p) {
  uint64_t ballot = 0, present = 0;
  for (unsigned l = 0; l < SIMT_WARP; l++) {
    sim_thread *o = lane_thread(warp, l);
    if (!(p.mask >> l & 1u) || !live(o)) continue;
    present |= 1ull << l;
    ballot |= (uint64_t)(o->coll.value != 0) << l;
  }
  uint32_t joined[SIMT_WARP] = {0};
  for (unsigned l = 0; l < SIMT_WARP; l++) {
    if (!(present >> l & 1u)) continue;
    sim_thread *t = lane_thread(warp, l);
    switch (p.kind) {
    case C_SYNC_WARP:
      t->clock[l]++;
      for (unsigned k = 0; k < SIMT_WARP; k++) joined[k] = joined[k] > t->clock[k] ? joined[k] : t->clock[k];
      break;
    case C_BALLOT: t->result = ballot; break;
    case C_ANY: t->result = ballot != 0; break;
    case C_ALL: t->result = ballot == present; break;
    default: {
      unsigned src = shuffle_source(t->coll, l);
      if (!(p.mask >> src & 1u))
        failf("%s at %s:%d in kernel %s: %s reads lane %u, which is not in the mask 0x%08x",
              collective_names[p.kind], t->coll.file, t->coll.line, blk->cfg->name, thread_name(t).c_str(),
              src, p.mask);
      if (!(present >> src & 1u))
        failf("%s at %s:%d in kernel %s: %s reads lane %u, which has exited", collective_names[p.kind],
              t->coll.file, t->coll.line, blk->cfg->name, thread_name(t).c_str(), src);
      t->result = lane_thread(warp, src)->coll.value;
    }
    }
  }
  for (unsigned l = 0; l < SIMT_WARP; l++) {
    if (!(present >> l & 1u)) continue;
    sim_thread *t = lane_thread(warp, l);
    if (p.kind == C_SYNC_WARP) memcpy(t->clock, joined, sizeof joined), new_epoch(t);
    make_runnable(t);
  }
}

/* Completes the collective lane t waits at once every live lane of its mask is there. */
static void try_collective(sim_thread *t) {
  for (unsigned l = 0; l < SIMT_WARP; l++) {
    sim_thread *o = lane_thread(t->warp, l);
    if ((t->coll.mask >> l & 1u) && live(o) && o->state != AT_COLLECTIVE) return;
  }
  complete_collective(t->warp, t->coll);
}

/* Lane t arrived at its collective: a defect when a lane that it and its mask name each other
 * waits at another collective, else the collective complete, or a wait. */
static void meet(sim_thread *t) {
  const pending &p = t->coll;
  for (unsigned l = 0; l < SIMT_WARP; l++) {
    sim_thread *o = lane_thread(t->warp, l);
    if (o == t || !live(o) || o->state != AT_COLLECTIVE) continue;
    if ((p.mask >> l & 1u) && (o->coll.mask >> t->lane & 1u) && !same_collective(p, o->coll))
      failf("lanes at different collectives in kernel %s: %s at %s (%s:%d, mask 0x%08x), lane %u at %s "
            "(%s:%d, mask 0x%08x)", blk->cfg->name, thread_name(t).c_str(), collective_names[p.kind],
            p.file, p.line, p.mask, l, collective_names[o->coll.kind], o->coll.file, o->coll.line,
            o->coll.mask);
  }
  try_collective(t);
}

uint64_t collective(collective_kind kind, unsigned mask, uint64_t value, int arg, int width,
                    const char *file, int line) {
  sim_thread *t = me(collective_names[kind]);
  if (!(mask >> t->lane & 1u))
    failf("%s at %s:%d in kernel %s: %s calls it with mask 0x%08x, which leaves out its own lane %u",
          collective_names[kind], file, line, blk->cfg->name, thread_name(t).c_str(), mask, t->lane);
  if (width < 1 || width > SIMT_WARP || (width & (width - 1)))
    failf("%s at %s:%d in kernel %s: width %d is not a power of two up to 32", collective_names[kind],
          file, line, blk->cfg->name, width);
  t->coll = pending{kind, mask, value, arg, width, file, line};
  t->state = AT_COLLECTIVE;
  t->file = file, t->line = line;
  drop_runnable(t);
  meet(t);
  yield_to_scheduler();
  return t->result;
}

unsigned active_mask() {
  sim_thread *t = me("active_mask");
  unsigned m = 0;
  for (unsigned l = 0; l < SIMT_WARP; l++) {
    sim_thread *o = lane_thread(t->warp, l);
    if (o && o->state != EXITED) m |= 1u << l;
  }
  return m;
}

void atomic_access(void *p, size_t size, int reads, const char *file, int line) {
  sim_thread *t = me("an atomic");
  if (!device().contains(p) && !shared().contains(p))
    failf("atomic at %s:%d in kernel %s on %p, which is neither device nor shared memory, by %s", file,
          line, blk->cfg->name, p, thread_name(t).c_str());
  kernel_access(p, size, 1, 1, reads, __builtin_return_address(0), file, line);
}

/* A prefetch touches no value, so it races with nothing; its address must still be device memory
 * a kernel may read (a device would fetch some other line, or fault). */
void prefetch_check(const void *p, const char *file, int line) {
  sim_thread *t = me("a prefetch");
  arena &d = device();
  size_t off = (uintptr_t)p - (uintptr_t)d.base;
  if (!d.contains(p) || !(((const cell *)d.shadow)[off / 8].acc >> (off % 8) & 1))
    failf("prefetch at %s:%d in kernel %s of %p, which is not addressable device memory, by %s", file, line,
          blk->cfg->name, p, thread_name(t).c_str());
}

/* A vector load or store of 16 bytes (what: "load", "store") needs its address aligned to 16 (a
 * device's misaligned address fault); its accesses are checked as those of its values. */
void access16_check(const void *p, const char *what, const char *file, int line) {
  sim_thread *t = me("a 16-byte access");
  if ((uintptr_t)p % 16 != 0)
    failf("16-byte %s at %s:%d in kernel %s of %p, which is not aligned to 16 bytes, by %s", what, file, line,
          blk->cfg->name, p, thread_name(t).c_str());
}

struct opt_in {
  const void *kernel;
  size_t bytes;
};
static std::vector<opt_in> opt_ins;

int allow_shared(const void *kernel, size_t bytes, char *message, size_t size) {
  if (bytes > SIMT_OPT_IN_SHARED) {
    snprintf(message, size, "simt: %zu bytes of shared memory are over the target's opt-in limit (%zu)",
             bytes, SIMT_OPT_IN_SHARED);
    return 1;
  }
  for (opt_in &o : opt_ins)
    if (o.kernel == kernel) return o.bytes = bytes, 0;
  opt_ins.push_back(opt_in{kernel, bytes});
  return 0;
}

static size_t shared_limit(const void *kernel) {
  for (const opt_in &o : opt_ins)
    if (o.kernel == kernel) return o.bytes > DEFAULT_SHARED_LIMIT ? o.bytes : DEFAULT_SHARED_LIMIT;
  return DEFAULT_SHARED_LIMIT;
}

void *shared_static(const void *key, size_t bytes, size_t align) {
  sim_thread *t = me("a shared array");
  for (const shared_decl &d : blk->statics)
    if (d.key == key) return shared().base + d.off;
  blk->static_bytes += bytes;
  if (blk->static_bytes > STATIC_SHARED_LIMIT)
    failf("kernel %s declares %zu bytes of static shared memory, over CUDA's 48 KB, by %s",
          blk->cfg->name, blk->static_bytes, thread_name(t).c_str());
  if (blk->static_bytes + blk->cfg->shared > shared_limit(blk->cfg->kernel))
    failf("kernel %s takes %zu bytes of static and %zu of dynamic shared memory, over the %zu "
          "allowed (opt in with allow_shared), by %s", blk->cfg->name, blk->static_bytes,
          blk->cfg->shared, shared_limit(blk->cfg->kernel), thread_name(t).c_str());
  size_t off = carve(shared(), bytes, align < 16 ? 16 : align);
  if (off == (size_t)-1) failf("kernel %s: out of simulated shared memory", blk->cfg->name);
  mark_fresh(shared(), off, bytes, 0xa5);
  blk->statics.push_back(shared_decl{key, off});
  return shared().base + off;
}

void *shared_dynamic() { return me("dynamic shared memory"), shared().base + blk->dynamic_off; }

void enter_kernel() { cur->in_kernel = 1; }

/* ---- launches ---------------------------------------------------------------------------------- */

static void fiber_main(void *arg) {
  sim_thread *t = (sim_thread *)arg;
  blk->cfg->entry(blk->cfg->args);
  t->in_kernel = 0;
  t->state = EXITED;
  drop_runnable(t);
  blk->live--;
  for (unsigned l = 0; l < SIMT_WARP; l++) { /* a collective may now have all its live lanes */
    sim_thread *o = lane_thread(t->warp, l);
    if (o && o->state == AT_COLLECTIVE && (o->coll.mask >> t->lane & 1u)) try_collective(o);
  }
  try_barrier();
  fiber_switch(&t->ctx, &scheduler);
  abort(); /* an exited fiber is never resumed */
}

static std::string deadlock(const block_state *b) {
  std::string s = "deadlock in kernel " + std::string(b->cfg->name) + ":";
  int shown = 0;
  for (unsigned i = 0; i < b->nthreads && shown < 8; i++) {
    const sim_thread *t = &b->threads[i];
    if (t->state == EXITED) continue;
    char line[300];
    if (t->state == AT_BARRIER) snprintf(line, sizeof line, " %s waits at the barrier at %s:%d;", thread_name(t).c_str(), t->file, t->line);
    else snprintf(line, sizeof line, " %s waits at %s at %s:%d (mask 0x%08x);", thread_name(t).c_str(),
                  collective_names[t->coll.kind], t->file, t->line, t->coll.mask);
    s += line;
    shown++;
  }
  return s;
}

/* Switches a block may take: far more than any test's kernel, a few minutes of a spin. */
#define SWITCH_BUDGET 200000000ull

static int run_block(block_state *b) {
  uint64_t switches = 0;
  arena &sh = shared();
  reset(sh);
  b->statics.clear();
  b->static_bytes = 0;
  b->dynamic_off = 0;
  if (b->cfg->shared) {
    b->dynamic_off = carve(sh, b->cfg->shared, 16);
    mark_fresh(sh, b->dynamic_off, b->cfg->shared, 0xa5);
  }
  b->epoch = 0;
  b->at_barrier = 0;
  b->live = b->nthreads;
  b->runnable.clear();
  for (unsigned i = 0; i < b->nthreads; i++) {
    sim_thread *t = &b->threads[i];
    memset(t->clock, 0, sizeof t->clock);
    t->tid = i;
    t->lane = i % SIMT_WARP;
    t->warp = i / SIMT_WARP;
    t->idx = dim3(i % b->cfg->block.x, i / b->cfg->block.x % b->cfg->block.y,
                  i / (b->cfg->block.x * b->cfg->block.y));
    t->in_kernel = 0;
    t->token = t->atomic_token = TOKEN_NONE;
    t->stack = stacks[i];
    fiber_init(&t->ctx, t->stack, STACK_BYTES, fiber_main, t);
    make_runnable(t);
  }
  while (!b->failed) {
    if (b->runnable.empty()) {
      if (b->live == 0) break;
      b->failed = 1;
      b->message = deadlock(b);
      break;
    }
    if (++switches > SWITCH_BUDGET) { /* a spin-wait that nothing in this block will end */
      b->failed = 1;
      b->message = "livelock in kernel " + std::string(b->cfg->name) +
                   ": a block still running after " + std::to_string(SWITCH_BUDGET) +
                   " switches (a wait on another block, which runs only after this one?)";
      break;
    }
    sim_thread *t = &b->threads[b->runnable[next_random() % b->runnable.size()]];
    cur = t;
    fiber_switch(&scheduler, &t->ctx);
    cur = NULL;
  }
  return b->failed;
}

static std::string limits(const launch_config &c) {
  const dim3 &g = c.grid, &k = c.block;
  char s[300] = "";
  uint64_t threads = (uint64_t)k.x * k.y * k.z;
  if (!g.x || !g.y || !g.z || !k.x || !k.y || !k.z) snprintf(s, sizeof s, "an empty grid or block");
  else if (threads > MAX_THREADS || k.x > 1024 || k.y > 1024 || k.z > 64)
    snprintf(s, sizeof s, "a block of %u x %u x %u threads (at most 1024 in all, z at most 64)", k.x, k.y, k.z);
  else if (g.x > 0x7fffffffu || g.y > 65535 || g.z > 65535)
    snprintf(s, sizeof s, "a grid of %u x %u x %u blocks (y and z at most 65535)", g.x, g.y, g.z);
  else if (c.shared > shared_limit(c.kernel))
    snprintf(s, sizeof s, "%zu bytes of dynamic shared memory (%zu allowed: opt in with allow_shared)",
             c.shared, shared_limit(c.kernel));
  return s;
}

/* A segmentation fault in a kernel (a stack overflow, a wild pointer): which kernel and thread,
 * on a stack of its own, before the usual crash. */
static void on_segv(int sig) {
  char s[300];
  int n = blk && cur ? snprintf(s, sizeof s, "simt: segmentation fault in kernel %s, %s\n", blk->cfg->name,
                                thread_name(cur).c_str())
                     : snprintf(s, sizeof s, "simt: segmentation fault outside a kernel\n");
  if (write(2, s, (size_t)n) < 0) n = 0;
  signal(sig, SIG_DFL);
  raise(sig);
}

static void catch_segv() {
  static char alt[64 << 10];
  stack_t ss = {};
  ss.ss_sp = alt;
  ss.ss_size = sizeof alt;
  sigaltstack(&ss, NULL);
  struct sigaction sa = {};
  sa.sa_handler = on_segv;
  sa.sa_flags = SA_ONSTACK;
  sigaction(SIGSEGV, &sa, NULL);
}

int run(const launch_config &c, uint64_t seed, uint64_t launch, char *message, size_t size) {
  static block_state state;
  std::string bad = limits(c);
  if (!bad.empty()) {
    snprintf(message, size, "simt: kernel %s launched with %s", c.name, bad.c_str());
    return 1;
  }
  if (!stacks[0]) {
    catch_segv();
    for (unsigned i = 0; i < MAX_THREADS; i++) {
      stacks[i] = (char *)mmap(NULL, STACK_BYTES, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (stacks[i] == MAP_FAILED) abort();
      mprotect(stacks[i], STACK_GUARD, PROT_NONE); /* against overflows (with -fstack-clash-protection) */
    }
  }
  rng = (seed + 1) * 0x9e3779b97f4a7c15ull ^ (launch + 1) * 0xd1b54a32d192ed03ull;
  if (!rng) rng = 1;
  launch_base += (uint32_t)tokens.size() + 1;
  tokens.clear();
  uint64_t nblocks = (uint64_t)c.grid.x * c.grid.y * c.grid.z;
  /* a random order of the blocks: from a random block, by a random stride prime to their count */
  uint64_t at = next_random() % nblocks, stride = 1 + next_random() % nblocks;
  while (std::gcd(stride, nblocks) != 1) stride++;
  block_state *b = &state;
  blk = b;
  b->cfg = &c;
  b->failed = 0;
  b->nthreads = c.block.x * c.block.y * c.block.z;
  int failed = 0;
  for (uint64_t k = 0; k < nblocks && !failed; k++, at = (at + stride) % nblocks) {
    uint64_t i = at;
    b->linear = (uint32_t)i;
    b->idx = dim3((unsigned)(i % c.grid.x), (unsigned)(i / c.grid.x % c.grid.y),
                  (unsigned)(i / ((uint64_t)c.grid.x * c.grid.y)));
    failed = run_block(b);
  }
  blk = NULL;
  if (failed) {
    char head[80];
    snprintf(head, sizeof head, "simt (GPUISO_SIMT_SEED=%llu, launch %llu): ", (unsigned long long)seed,
             (unsigned long long)launch);
    defects.push_back(head + b->message);
    snprintf(message, size, "%s", defects.back().c_str());
  }
  return failed;
}

} // namespace simt_cpu

/* ---- the host side: device memory ---------------------------------------------------------------- */

using namespace simt_cpu;

void *sim_alloc(size_t bytes) {
  arena &d = device();
  size_t off = carve(d, bytes, 256);
  if (off == (size_t)-1) return NULL;
  mark_fresh(d, off, bytes, 0xa5);
  return d.base + off;
}

int sim_free(void *p) {
  arena &d = device();
  if (!p) return 0;
  size_t off = (uintptr_t)p - (uintptr_t)d.base;
  int live = 0, found = 0;
  for (region &r : d.regions) {
    if (r.off == off && r.live) {
      r.live = 0, found = 1;
      mark_gone(d, r.off, r.bytes);
    }
    live += r.live;
  }
  if (!found) {
    defects.push_back("simt: a free of a pointer that is not a live device allocation");
    return 1;
  }
  if (live == 0) reset(d);
  return 0;
}

void sim_guard(void *p, size_t n) {
  if (n) mark_gone(device(), (uintptr_t)p - (uintptr_t)device().base, n);
}

/* Checks that [p, p + n) lies in live device memory; 0 if so, else a defect. */
static int device_range(const void *p, size_t n, const char *what) {
  arena &d = device();
  if (!d.contains(p) || !d.contains((const char *)p + (n ? n - 1 : 0))) {
    defects.push_back(std::string("simt: ") + what + " of a pointer that is not device memory");
    return 1;
  }
  size_t off = (uintptr_t)p - (uintptr_t)d.base, bad = (size_t)-1;
  each_cell(d, off, n, [&](cell *c, uint8_t m) {
    if ((c->acc & m) != m && bad == (size_t)-1)
      bad = (size_t)(c - (cell *)d.shadow) * 8 + (size_t)__builtin_ctz((unsigned)(m & ~c->acc));
  });
  if (bad == (size_t)-1) return 0;
  defects.push_back(std::string("simt: ") + what + " of " + std::to_string(n) + " bytes reaches " +
                    describe(d, "device", bad));
  return 1;
}

int sim_put(void *dev, const void *host, size_t n) {
  if (!n) return 0;
  if (device_range(dev, n, "a copy to the device")) return 1;
  memcpy(dev, host, n);
  mark_host_written(device(), (uintptr_t)dev - (uintptr_t)device().base, n);
  return 0;
}

int sim_get(void *host, const void *dev, size_t n) {
  if (!n) return 0;
  if (device_range(dev, n, "a copy from the device")) return 1;
  memcpy(host, dev, n);
  return 0;
}

int sim_fill(void *dev, int byte, size_t n) {
  if (!n) return 0;
  if (device_range(dev, n, "a memset")) return 1;
  memset(dev, byte, n);
  mark_host_written(device(), (uintptr_t)dev - (uintptr_t)device().base, n);
  return 0;
}

size_t sim_defects(void) { return defects.size(); }
const char *sim_defect(size_t i) { return i < defects.size() ? defects[i].c_str() : ""; }

/* ---- ThreadSanitizer's hooks ------------------------------------------------------------------------ */

#define PC __builtin_return_address(0)
#define HOOKS(N)                                                                           \
  extern "C" void __tsan_read##N(void *p) { on_access(p, N, 0, PC); }                         \
  extern "C" void __tsan_write##N(void *p) { on_access(p, N, 1, PC); }                        \
  extern "C" void __tsan_unaligned_read##N(void *p) { on_access(p, N, 0, PC); }               \
  extern "C" void __tsan_unaligned_write##N(void *p) { on_access(p, N, 1, PC); }              \
  extern "C" void __tsan_volatile_read##N(void *p) { on_access(p, N, 0, PC); }                \
  extern "C" void __tsan_volatile_write##N(void *p) { on_access(p, N, 1, PC); }
HOOKS(1)
HOOKS(2)
HOOKS(4)
HOOKS(8)
HOOKS(16)
extern "C" void __tsan_read_range(void *p, unsigned long n) { if (n) on_access(p, n, 0, PC); }
extern "C" void __tsan_write_range(void *p, unsigned long n) { if (n) on_access(p, n, 1, PC); }
extern "C" void __tsan_init(void) {}
extern "C" void __tsan_func_entry(void *) {}
extern "C" void __tsan_func_exit(void) {}
extern "C" void __tsan_vptr_update(void **, void *) {}
extern "C" void __tsan_vptr_read(void **) {}
