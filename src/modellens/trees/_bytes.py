"""Compiled reads of a C-contiguous uint8 array (a model file's bytes) for the scans of
the model-file checks: big-endian integers in one load each, a view without reference
counting, a prefetch hint.  Like numba's indexing, none checks its offset: the callers
keep it inside the array."""

from __future__ import annotations

from llvmlite import ir  # type: ignore[import-untyped]
from numba.core import cgutils, types
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array

__all__ = ["_borrowed", "_i16", "_i32", "_i64", "_prefetch"]


def _bytes_at(data, at) -> bool:
    """Whether the compiled arguments are a C-contiguous one-dimensional uint8 array and an
    integer offset: the only signature the byte intrinsics below accept."""
    return (isinstance(data, types.Array) and data.dtype == types.uint8 and data.ndim == 1
            and data.layout == "C" and isinstance(at, types.Integer))


def _byte_address(context, builder, signature, args):
    """The address of byte ``args[1]`` of the array ``args[0]``, in generated code."""
    array = context.make_array(signature.args[0])(context, builder, args[0])
    at = context.cast(builder, args[1], signature.args[1], types.intp)
    return builder.gep(array.data, [at])


def _big_endian(bits):
    """A compiled read of the big-endian signed integer of ``bits`` bits at a byte offset of a
    C-contiguous uint8 array (as int64): one unaligned load and a byte swap (numba left
    the four byte reads of a shifted sum four loads: a node check cost four times as
    much).  Like numba's indexing (bounds unchecked), the caller keeps the offset inside
    the array."""
    width = ir.IntType(bits)

    @intrinsic
    def read(typingctx, data, at):
        if not _bytes_at(data, at):
            return None
        sig = types.int64(data, at)

        def codegen(context, builder, signature, args):
            where = builder.bitcast(_byte_address(context, builder, signature, args),
                                    width.as_pointer())
            value = builder.load(where, align=1)
            if bits > 8:
                swap = cgutils.get_or_insert_function(
                    builder.module, ir.FunctionType(width, [width]), f"llvm.bswap.i{bits}")
                value = builder.call(swap, [value])
            return value if bits == 64 else builder.sext(value, ir.IntType(64))

        return sig, codegen

    return read


#: Big-endian int16, int32 and int64 reads (:func:`_big_endian`).
_i16, _i32, _i64 = _big_endian(16), _big_endian(32), _big_endian(64)


def _borrowed_view():
    """A compiled view of a C-contiguous one-dimensional array without its reference
    count (no ``meminfo``): numba counts a reference up and down, an atomic operation
    each, every time an array is handed to a compiled function, and the UBJSON scan hands
    the file's bytes and its table of key names to one for each key it reads (a quarter
    of the scan's time).  The caller keeps the array itself alive while the view is in
    use (the scan: its arguments, held by its caller)."""

    @intrinsic
    def borrowed(typingctx, data):
        if not (isinstance(data, types.Array) and data.ndim == 1 and data.layout == "C"):
            return None

        def codegen(context, builder, signature, args):
            array = context.make_array(signature.args[0])(context, builder, args[0])
            out = context.make_array(signature.return_type)(context, builder)
            populate_array(out, data=array.data, shape=array.shape, strides=array.strides,
                           itemsize=array.itemsize, meminfo=None)
            return out._getvalue()

        return data(data), codegen

    return borrowed


#: :func:`_borrowed_view`.
_borrowed = _borrowed_view()


def _prefetch_hint():
    """A compiled hint to bring the cache line of byte ``at`` of a C-contiguous uint8 array
    into the caches (LLVM's ``llvm.prefetch``: a read, kept in every level), so that a
    pass that jumps ahead through a file (the UBJSON scan reads a tree's keys, which lie
    a node array apart) finds its bytes there instead of waiting on memory each time.
    A hint only: it reads nothing into the program and never faults; the caller keeps
    ``at`` inside the array all the same."""

    @intrinsic
    def prefetch(typingctx, data, at):
        if not _bytes_at(data, at):
            return None
        sig = types.void(data, at)

        def codegen(context, builder, signature, args):
            where = _byte_address(context, builder, signature, args)
            i32 = ir.IntType(32)
            hint = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), [where.type, i32, i32, i32]),
                "llvm.prefetch.p0i8")
            builder.call(hint, [where, i32(0), i32(3), i32(1)])
            return context.get_dummy_value()

        return sig, codegen

    return prefetch


#: :func:`_prefetch_hint`.
_prefetch = _prefetch_hint()
