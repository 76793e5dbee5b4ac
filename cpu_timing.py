"""在 CPU 上可靠地计时：第 1 讲的 CPU roofline 实验和评分机的参照测量用的是同一份代码。

【做法】可靠的计时要做到六件事：
- 线程数固定为 1（`pin_threads`）：BLAS 默认用上所有核心，线程数一变，GFLOP/s 能差好几倍；
- 预先分配好输入和输出（`out=`）：计时里不包含分配内存、缺页这些和运算无关的开销；
- 数组大过最后一级缓存（`STREAM_BYTES`）：测的是内存带宽，而不是缓存带宽；
- 先热身（第一次运行载入代码、触碰每一页内存），再重复几次取**中位数**：中位数不受偶尔的干扰影响；
- 计的是这个线程用掉的 CPU 时间（`CLOCK`），不是墙上时间：机器上别的程序占用 CPU 的时间不算进来
  （Windows 上退回墙上时间，见 `CLOCK`）；
- 计时器要比一次运行精细得多：线程时钟精确到纳秒，最小的矩阵（m = 64）跑一次也有几微秒。

【边界】评分时，评分机在同样的沙箱里用这里的函数把同样的运算量一遍（评分开始前量一次，一批作业共用；你的测量值对不上时，
紧接着你的 notebook 再量一遍），你的测量值和它的参照值相差在 `AGREEMENT_FACTOR` 倍以内就算对：计的是 CPU 时间，
别的程序抢走 CPU 的时间不算进来（它们分走内存带宽时，triad 和 exp 仍会变慢）。
而且它必须由你同一次运行里这些函数量出的耗时（`TIMINGS` 记下的）按正确的字节数、FLOP 数换算出来：数错了搬运的字节
或 FLOP，即使落在这个倍数之内也不算对。
"""

from __future__ import annotations

import os
import sys
import time

# 在 numpy 载入之前设置才有效；numpy 已经载入时由 threadpoolctl 在运行时限制（pin_threads）
if "numpy" not in sys.modules:
    for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                      "VECLIB_MAXIMUM_THREADS"):
        os.environ[_variable] = "1"

import numpy as np

THREADS = 1
# 每个数组 32 MiB，大过大多数笔记本和台式机的最后一级缓存（几 MiB 到几十 MiB）。numpy 的 triad 用到三个
# 数组（96 MiB），exp 用到两个（64 MiB）：最后一级缓存有 32 MiB 以上的处理器（带 3D V-Cache 的、许多服务器 CPU）上，量到的可能
# 有一部分甚至全部是缓存的带宽
STREAM_BYTES = 32 * 1024**2
EXP_N = STREAM_BYTES // 4          # float32 个数
TRIAD_N = STREAM_BYTES // 8        # float64 个数
TRIAD_BYTES_PER_ELEMENT = 3 * 8    # STREAM 的约定：读 b、读 c、写 a
GEMM_SIZES = (64, 128, 256, 512)   # float32 方阵的边长
REPEATS = 5
# 计时用这个线程自己用掉的 CPU 时间：别的程序抢走 CPU 的那段时间不算进来。机器忙时它也会变长：别的程序分走内存带宽、
# 占用同一个物理核心（超线程）或让 CPU 降频时，同样的运算要用更多 CPU 时间。
# Windows 的线程 CPU 时间按 15.6 ms 的时钟节拍累加，量不了几毫秒的运行：那里退回到墙上时间 perf_counter。
CLOCK = time.perf_counter if sys.platform == "win32" else time.thread_time
# 你的测量值 / 评分机的参照值 落在 [1/AGREEMENT_FACTOR, AGREEMENT_FACTOR] 内算一致（为什么是 3：课程仓库的 docs/measurement.md）
AGREEMENT_FACTOR = 3.0
# 这次运行量过的每一次耗时：(运算, 规模, 秒)，运算是 "exp"、"triad" 或 "gemm"，规模是 n 或 m。评分机拿你的测量值和
# 这里记下的耗时对照：测量值要由其中一次按正确的字节数、FLOP 数换算出来
TIMINGS: list[tuple[str, int, float]] = []


def pin_threads(threads: int = THREADS) -> str:
    """把 BLAS/OpenMP 的线程数限制为 `threads`，返回做法（"threadpoolctl" 或 "environment"）。"""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # 没装 threadpoolctl：只有 numpy 载入前设置的环境变量起作用
        return "environment"
    threadpool_limits(limits=threads)
    return "threadpoolctl"


PINNED_BY = pin_threads()


def median_seconds(f, repeats: int = REPEATS, warmup: int = 1) -> float:
    """先运行 `warmup` 次热身，再运行 `repeats` 次，返回耗时（`CLOCK`，秒）的中位数。"""
    for _ in range(warmup):
        f()
    times = []
    for _ in range(repeats):
        start = CLOCK()
        f()
        times.append(CLOCK() - start)
    return float(np.median(times))


def shows_measured() -> bool:
    """评分机运行 notebook 时（CS349E_TRUSTED_GRADING=1）是 False：测量结果不打印、不画图。
    每次量出的数都不同，而评分结果（包括 notebook 的输出）只能由你提交的文件决定。"""
    return os.environ.get("CS349E_TRUSTED_GRADING") != "1"


def show_measured(headers: list[str], rows: list[list]) -> None:
    """把测量结果打印成表格；评分机运行 notebook 时不打印（见 shows_measured）。"""
    if not shows_measured():
        return
    from console import print_table

    print_table(headers, rows)


def exp_seconds(n: int = EXP_N) -> float:
    """`np.exp(x, out=y)` 处理 n 个 float32 数一次的耗时（秒，中位数）；y 预先分配。"""
    x = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    y = np.empty_like(x)
    return _noted("exp", n, median_seconds(lambda: np.exp(x, out=y)))


def triad_seconds(n: int = TRIAD_N) -> float:
    """STREAM 式 triad `a = b + 3·c`（n 个 float64）一次的耗时（秒，中位数）。

    numpy 分两步算（先 a = 3·c，再 a += b），实际搬运的字节比 STREAM 约定的每个元素 24 字节多。"""
    b = np.full(n, 1.0)
    c = np.full(n, 2.0)
    a = np.empty_like(b)

    def run():
        np.multiply(c, 3.0, out=a)
        np.add(a, b, out=a)

    return _noted("triad", n, median_seconds(run))


def gemm_seconds(m: int) -> float:
    """m × m 的 float32 矩阵乘法 `np.matmul(a, b, out=c)` 一次的耗时（秒，中位数）；c 预先分配。"""
    rng = np.random.default_rng(m)
    a = rng.standard_normal((m, m), dtype=np.float32)
    b = rng.standard_normal((m, m), dtype=np.float32)
    c = np.empty((m, m), dtype=np.float32)
    return _noted("gemm", m, median_seconds(lambda: np.matmul(a, b, out=c)))


def _noted(operation: str, size: int, seconds: float) -> float:
    """记下这次量出的耗时（TIMINGS），原样返回。"""
    TIMINGS.append((operation, int(size), seconds))
    return seconds


def reference_measurements() -> dict[str, object]:
    """评分机的参照测量：和 notebook 里同样的运算、同样的做法，只给耗时（秒）；
    换算成 GB/s、GFLOP/s 和纳秒是你在 notebook 里要做的事。"""
    return {"exp_seconds": exp_seconds(), "triad_seconds": triad_seconds(),
            **{f"gemm_seconds_{m}": gemm_seconds(m) for m in GEMM_SIZES}, "pinned_by": PINNED_BY}

