"""Pack a folder of images into MXNet RecordIO files (``.rec`` + ``.idx``).

Works in two steps, as MXNet's ``im2rec`` does::

    # 1. list the images: one label per subfolder, 90% train / 10% validation
    python -m lazynd.tools.im2rec --list --recursive --train-ratio 0.9 data/pets data/pets_images
    # 2. pack every data/pets*.lst into data/pets*.rec and .idx
    python -m lazynd.tools.im2rec --resize 256 --num-thread 4 data/pets data/pets_images

A ``.lst`` file has one ``index<TAB>label[<TAB>label...]<TAB>path`` line per
image, ``path`` relative to the image root.  Records are written in list
order, keyed by ``index`` in the ``.idx`` file, with the header
``IRHeader(0, label, index, 0)``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import cv2
import numpy as np
from tqdm import tqdm

from lazynd.errors import FormatError
from lazynd.formats.fileio import write_atomic
from lazynd.recordio import IRHeader, MXIndexedRecordIO, pack, pack_img


@dataclass(frozen=True)
class ListEntry:
    """One line of a ``.lst`` file."""

    index: int
    labels: tuple[float, ...]
    path: str


def list_images(root: str, recursive: bool, exts: Sequence[str]) -> tuple[list[ListEntry], dict[str, int]]:
    """Find the images under ``root``, in sorted order.

    Returns the entries and, when ``recursive``, the label given to each
    folder (relative to ``root``) that holds images: 0, 1, ... in walk order.
    Without ``recursive`` only the files directly in ``root`` are listed, all
    with label 0.
    """
    wanted = {ext.lower() if ext.startswith(".") else "." + ext.lower() for ext in exts}
    entries: list[ListEntry] = []
    classes: dict[str, int] = {}
    for folder, subfolders, files in os.walk(root, followlinks=True):
        subfolders.sort()
        for name in sorted(files):
            if os.path.splitext(name)[1].lower() not in wanted:
                continue
            relative = os.path.relpath(os.path.join(folder, name), root)
            if any(c in relative for c in "\t\r\n"):
                _warn(f"skipping {relative!r}: a .lst path cannot hold tabs or line breaks")
                continue
            label = classes.setdefault(os.path.relpath(folder, root), len(classes))
            entries.append(ListEntry(len(entries), (float(label),), relative))
        if not recursive:
            break
    return entries, classes


def split_list(
    entries: list[ListEntry], train_ratio: float, test_ratio: float, chunk_size: int | None = None
) -> dict[str, list[ListEntry]]:
    """Split entries into ``.lst`` files, keyed by file-name suffix.

    ``{'': all}`` when everything is for training, else ``_test`` (the
    first ``test_ratio``), ``_train`` (the next ``train_ratio``) and ``_val``
    (the rest, when there is any), as MXNet's im2rec splits.  The shares are
    of ``chunk_size`` entries (default: all of them): MXNet takes them of the
    full chunk size for the shorter last chunk too.
    """
    if not (0 <= train_ratio <= 1 and 0 <= test_ratio <= 1 and train_ratio + test_ratio <= 1):
        raise ValueError(
            "--train-ratio and --test-ratio must lie in [0, 1] with a sum of at most 1; "
            f"given {train_ratio} and {test_ratio}"
        )
    if train_ratio == 1:
        return {"": entries}
    size = len(entries) if chunk_size is None else chunk_size
    n_test = int(size * test_ratio)
    n_train = int(size * train_ratio)
    parts = {"_train": entries[n_test : n_test + n_train]}
    if test_ratio > 0:
        parts["_test"] = entries[:n_test]
    if train_ratio + test_ratio < 1:
        parts["_val"] = entries[n_test + n_train :]
    return parts


def write_list(path: str, entries: Sequence[ListEntry]) -> None:
    """Write a ``.lst`` file (atomically)."""
    lines = ["\t".join([str(e.index), *(f"{label:f}" for label in e.labels), e.path]) + "\n" for e in entries]
    write_atomic(path, "".join(lines).encode("utf-8"))


def read_list(path: str) -> list[ListEntry]:
    """Read a ``.lst`` file; a malformed line or a repeated index raises FormatError."""
    entries: list[ListEntry] = []
    seen: set[int] = set()
    with open(path, encoding="utf-8") as file:
        for number, line in enumerate(file, start=1):
            # each field stripped of surrounding blanks, as MXNet's im2rec reads them
            fields = [field.strip() for field in line.strip().split("\t")]
            if fields == [""]:
                continue
            try:
                if len(fields) < 3:
                    raise ValueError(f"{len(fields)} tab-separated fields, expected 3 or more")
                entry = ListEntry(int(fields[0]), tuple(float(f) for f in fields[1:-1]), fields[-1])
            except ValueError as error:
                raise FormatError(
                    f"{path}: line {number} is {line.rstrip()!r}; expected 'index<TAB>label(s)<TAB>path' ({error})"
                ) from None
            if entry.index in seen:
                raise FormatError(f"{path}: line {number} repeats index {entry.index}")
            seen.add(entry.index)
            entries.append(entry)
    return entries


def _warn(message: str) -> None:
    tqdm.write(message, file=sys.stderr)


def transform_image(image: np.ndarray, resize: int, center_crop: bool) -> np.ndarray:
    """Crop to the central square if asked, then scale the shorter edge to ``resize``.

    Scaling is bilinear (OpenCV's default), shrinking too, as MXNet's im2rec
    scales: the records hold the same pixels as the ones MXNet writes.
    """
    if center_crop:
        height, width = image.shape[:2]
        side = min(height, width)
        top, left = (height - side) // 2, (width - side) // 2
        image = image[top : top + side, left : left + side]
    if resize:
        height, width = image.shape[:2]
        if height > width:
            size = (resize, height * resize // width)
        else:
            size = (width * resize // height, resize)
        image = cv2.resize(image, size, interpolation=cv2.INTER_LINEAR)
    return image


def encode_entry(entry: ListEntry, root: str, args: argparse.Namespace) -> bytes | None:
    """Build the record of one list entry; ``None`` (with a warning) if unreadable."""
    full_path = os.path.join(root, entry.path)
    # as MXNet's im2rec writes them: one label is a number, --pack-label or not; several are an array
    # with --pack-label, and only the first is kept without it
    several = len(entry.labels) > 1 and args.pack_label
    label: object = entry.labels if several else entry.labels[0]
    header = IRHeader(0, label, entry.index, 0)
    try:
        # Reading in Python and decoding from memory releases the GIL for both steps.
        with open(full_path, "rb") as file:
            data = file.read()
    except OSError as error:
        _warn(f"skipping {full_path}: {error.strerror or error}")
        return None
    if args.pass_through:
        return pack(header, data)
    image = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), args.color) if data else None
    if image is None:
        _warn(f"skipping {full_path}: OpenCV cannot decode it as an image")
        return None
    image = transform_image(image, args.resize, args.center_crop)
    return pack_img(header, image, quality=args.quality, img_fmt=args.encoding)


def pack_list(lst_path: str, root: str, args: argparse.Namespace) -> tuple[int, int]:
    """Pack the images of one ``.lst`` into ``.rec``/``.idx`` beside it.

    Returns the number of records written and of images skipped.
    """
    entries = read_list(lst_path)
    stem = os.path.splitext(lst_path)[0]
    written = skipped = 0
    show = not args.no_progress and sys.stderr.isatty()
    bar = tqdm(total=len(entries), desc=os.path.basename(stem), unit="img", disable=not show)
    with (
        MXIndexedRecordIO(stem + ".idx", stem + ".rec", "w") as writer,
        ThreadPoolExecutor(max_workers=args.num_thread) as pool,
        bar,
    ):
        pending: deque[tuple[ListEntry, Future[bytes | None]]] = deque()
        window = 4 * args.num_thread  # bounds memory while keeping every worker busy

        def write_oldest() -> None:
            nonlocal written, skipped
            entry, future = pending.popleft()
            record = future.result()
            if record is None:
                skipped += 1
            else:
                writer.write_idx(entry.index, record)
                written += 1
            bar.update(1)

        for entry in entries:
            pending.append((entry, pool.submit(encode_entry, entry, root, args)))
            if len(pending) >= window:
                write_oldest()
        while pending:
            write_oldest()
    return written, skipped


def find_lists(prefix: str) -> list[str]:
    """``prefix.lst`` if it exists, else every ``prefix*.lst`` (e.g. ``_train``, ``_val``)."""
    if os.path.isfile(prefix + ".lst"):
        return [prefix + ".lst"]
    folder, stem = os.path.split(prefix)
    folder = folder or "."
    names = sorted(n for n in os.listdir(folder) if n.startswith(stem) and n.endswith(".lst"))
    return [os.path.join(folder, n) for n in names]


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(
        prog="python -m lazynd.tools.im2rec",
        description="Make an image list (--list) or pack a list into RecordIO .rec/.idx files.",
    )
    parser.add_argument("prefix", help="prefix of the .lst/.rec/.idx files (no extension)")
    parser.add_argument("root", help="folder the image paths are relative to")
    listing = parser.add_argument_group("making a list (--list)")
    listing.add_argument("--list", action="store_true", help="write prefix.lst instead of packing")
    listing.add_argument("--exts", nargs="+", default=[".jpeg", ".jpg", ".png"], help="image extensions")
    listing.add_argument("--recursive", action="store_true", help="walk subfolders, one label per folder")
    listing.add_argument("--chunks", type=int, default=1, help="split the list into prefix_0, prefix_1, ...")
    listing.add_argument("--train-ratio", type=float, default=1.0, help="share for prefix_train.lst")
    listing.add_argument("--test-ratio", type=float, default=0.0, help="share for prefix_test.lst")
    listing.add_argument("--shuffle", action=argparse.BooleanOptionalAction, default=True)
    listing.add_argument("--seed", type=int, default=100, help="seed of the shuffle")
    packing = parser.add_argument_group("packing a list")
    packing.add_argument("--pass-through", action="store_true", help="store the files' bytes as they are")
    packing.add_argument(
        "--resize",
        type=int,
        default=0,
        help="scale the shorter edge to this many pixels",
    )
    packing.add_argument("--center-crop", action="store_true", help="crop to the central square first")
    packing.add_argument("--quality", type=int, default=95, help="JPEG quality, or PNG compression 0-9")
    packing.add_argument("--encoding", choices=[".jpg", ".png"], default=".jpg")
    packing.add_argument(
        "--color",
        type=int,
        choices=[-1, 0, 1],
        default=1,
        help="-1 as is, 0 gray, 1 BGR",
    )
    packing.add_argument(
        "--pack-label",
        action="store_true",
        help="store every label of a line (an array); without it only the first, as MXNet's im2rec",
    )
    packing.add_argument("--num-thread", type=int, default=1, help="images encoded in parallel")
    packing.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the tool; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.num_thread < 1:
        parser.error(f"--num-thread must be at least 1; given {args.num_thread}")
    if args.chunks < 1:
        parser.error(f"--chunks must be at least 1; given {args.chunks}")
    if args.resize < 0:
        parser.error(f"--resize must be 0 (keep) or a positive size; given {args.resize}")
    if not os.path.isdir(args.root):
        parser.error(f"image root {args.root!r} is not a folder")
    if args.list:
        entries, classes = list_images(args.root, args.recursive, args.exts)
        if args.recursive:
            for folder, label in classes.items():
                print(folder, label)  # MXNet's im2rec prints the classes so, a line each
        if args.shuffle:
            random.Random(args.seed).shuffle(entries)
        chunk_size = (len(entries) + args.chunks - 1) // args.chunks
        for chunk in range(args.chunks):
            # MXNet names the chunks prefix_0, prefix_1, ... only when there are several
            chunk_prefix = args.prefix + (f"_{chunk}" if args.chunks > 1 else "")
            part_entries = entries[chunk * chunk_size : (chunk + 1) * chunk_size]
            try:
                parts = split_list(part_entries, args.train_ratio, args.test_ratio, chunk_size)
            except ValueError as error:
                parser.error(str(error))
            for suffix, part in parts.items():
                write_list(chunk_prefix + suffix + ".lst", part)
                print(f"{chunk_prefix}{suffix}.lst: {len(part)} images")
        return 0
    if not 0 <= args.quality <= 100:
        parser.error(f"--quality must lie in [0, 100]; given {args.quality}")
    lists = find_lists(args.prefix)
    if not lists:
        parser.error(f"no list {args.prefix}.lst or {args.prefix}*.lst; make one with --list first")
    for lst_path in lists:
        written, skipped = pack_list(lst_path, args.root, args)
        stem = os.path.splitext(lst_path)[0]
        print(f"{stem}.rec: {written} records" + (f", {skipped} images skipped" if skipped else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
