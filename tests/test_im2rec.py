"""im2rec: listing an image folder, packing the list, reading the records back."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

import lazynd
from lazynd import recordio
from lazynd.errors import FormatError
from lazynd.tools import im2rec

# Two classes of solid-colour images (BGR), of sizes that make resizing visible.
COLOURS = {"cats": (10, 200, 30), "dogs": (220, 40, 90)}
SIZES = [(40, 60), (64, 32), (30, 30)]


@pytest.fixture
def image_root(tmp_path: Path) -> Path:
    root = tmp_path / "images"
    for folder, colour in COLOURS.items():
        (root / folder).mkdir(parents=True)
        for number, (height, width) in enumerate(SIZES):
            image = np.empty((height, width, 3), np.uint8)
            image[:] = colour
            cv2.imwrite(str(root / folder / f"{number}.png"), image)
    (root / "cats" / "notes.txt").write_text("not an image")
    return root


def read_lst(path: Path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text().splitlines()]


def read_rec(prefix: Path) -> list[tuple[recordio.IRHeader, np.ndarray]]:
    with recordio.MXIndexedRecordIO(f"{prefix}.idx", f"{prefix}.rec", "r") as reader:
        return [recordio.unpack_img(reader.read_idx(key)) for key in reader.keys]


def test_recursive_list_gives_one_label_per_subfolder(image_root: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "data"
    assert im2rec.main(["--list", "--recursive", "--no-shuffle", str(prefix), str(image_root)]) == 0
    lines = read_lst(tmp_path / "data.lst")
    assert lines == [
        [str(i), f"{i // 3:f}", f"{folder}/{n}.png"]
        for i, (folder, n) in enumerate((f, n) for f in COLOURS for n in range(3))
    ]


def test_list_without_recursive_takes_only_top_level_images(image_root: Path, tmp_path: Path) -> None:
    cv2.imwrite(str(image_root / "top.jpg"), np.zeros((4, 4, 3), np.uint8))
    im2rec.main(["--list", str(tmp_path / "data"), str(image_root)])
    assert read_lst(tmp_path / "data.lst") == [["0", "0.000000", "top.jpg"]]


def test_shuffled_list_is_a_seeded_permutation(image_root: Path, tmp_path: Path) -> None:
    args = ["--list", "--recursive", "--seed", "3"]
    im2rec.main([*args, str(tmp_path / "a"), str(image_root)])
    im2rec.main([*args, str(tmp_path / "b"), str(image_root)])
    lines = read_lst(tmp_path / "a.lst")
    assert lines == read_lst(tmp_path / "b.lst")
    assert sorted(int(line[0]) for line in lines) == list(range(6))
    assert [int(line[0]) for line in lines] != list(range(6))


def test_ratios_split_the_list_into_train_val_and_test(image_root: Path, tmp_path: Path) -> None:
    im2rec.main(
        ["--list", "--recursive", "--train-ratio", "0.5", "--test-ratio", "0.34",
         str(tmp_path / "data"), str(image_root)]
    )  # fmt: skip
    parts = {s: read_lst(tmp_path / f"data_{s}.lst") for s in ("train", "val", "test")}
    assert {s: len(lines) for s, lines in parts.items()} == {
        "train": 3,
        "val": 1,
        "test": 2,
    }
    indices = sorted(int(line[0]) for lines in parts.values() for line in lines)
    assert indices == list(range(6))
    assert not (tmp_path / "data.lst").exists()


def test_ratios_summing_past_one_are_rejected(image_root: Path, tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        im2rec.main(
            ["--list", "--train-ratio", "0.8", "--test-ratio", "0.3",
             str(tmp_path / "data"), str(image_root)]
        )  # fmt: skip


def test_packed_records_follow_list_order_with_headers_and_resized_images(image_root: Path, tmp_path: Path) -> None:
    prefix = str(tmp_path / "data")
    im2rec.main(["--list", "--recursive", prefix, str(image_root)])
    entries = im2rec.read_list(prefix + ".lst")
    im2rec.main(
        ["--resize", "16", "--encoding", ".png", "--num-thread", "3", "--no-progress",
         prefix, str(image_root)]
    )  # fmt: skip
    with recordio.MXIndexedRecordIO(prefix + ".idx", prefix + ".rec", "r") as reader:
        assert reader.keys == [e.index for e in entries]
        records = [recordio.unpack_img(record) for record in reader]
    for entry, (header, image) in zip(entries, records, strict=True):
        assert header == recordio.IRHeader(0, entry.labels[0], entry.index, 0)
        folder, name = entry.path.split("/")
        height, width = SIZES[int(name[0])]
        assert min(image.shape[:2]) == 16
        assert image.shape[0] * width == pytest.approx(image.shape[1] * height, abs=width)
        assert (image == COLOURS[folder]).all()


def test_center_crop_makes_square_images(image_root: Path, tmp_path: Path) -> None:
    prefix = str(tmp_path / "data")
    im2rec.main(["--list", "--recursive", prefix, str(image_root)])
    im2rec.main(["--center-crop", "--resize", "12", prefix, str(image_root)])
    assert {image.shape for _, image in read_rec(Path(prefix))} == {(12, 12, 3)}


def test_several_labels_are_packed_as_a_label_array_with_pack_label(image_root: Path, tmp_path: Path) -> None:
    (tmp_path / "multi.lst").write_text("4\t1.5\t2.0\tcats/0.png\n9\t3.0\tdogs/1.png\n")
    im2rec.main(["--pass-through", "--pack-label", str(tmp_path / "multi"), str(image_root)])
    headers = [header for header, _ in read_rec(tmp_path / "multi")]
    assert [(h.flag, h.id) for h in headers] == [(2, 4), (0, 9)]
    np.testing.assert_array_equal(headers[0].label, [1.5, 2.0])
    assert headers[1].label == 3.0


def test_without_pack_label_only_the_first_label_is_packed_as_mxnet_does(image_root: Path, tmp_path: Path) -> None:
    (tmp_path / "multi.lst").write_text("4\t1.5\t2.0\tcats/0.png\n")
    im2rec.main(["--pass-through", str(tmp_path / "multi"), str(image_root)])
    [(header, _)] = read_rec(tmp_path / "multi")
    assert header == recordio.IRHeader(0, 1.5, 4, 0)


def test_shrinking_resize_is_bilinear_as_mxnet_im2rec(tmp_path: Path) -> None:
    # MXNet's im2rec calls cv2.resize with OpenCV's default (bilinear) interpolation, shrinking too
    root = tmp_path / "noise"
    root.mkdir()
    image = np.random.RandomState(0).randint(0, 256, (40, 30, 3)).astype(np.uint8)
    cv2.imwrite(str(root / "a.png"), image)
    (tmp_path / "n.lst").write_text("0\t0.000000\ta.png\n")
    im2rec.main(["--resize", "12", "--encoding", ".png", str(tmp_path / "n"), str(root)])
    [(_, packed)] = read_rec(tmp_path / "n")
    np.testing.assert_array_equal(packed, cv2.resize(image, (12, 16), interpolation=cv2.INTER_LINEAR))


def test_chunks_split_the_list_as_mxnet_names_them(image_root: Path, tmp_path: Path) -> None:
    args = ["--list", "--recursive", "--chunks", "2", "--train-ratio", "0.5", "--no-shuffle"]
    im2rec.main([*args, str(tmp_path / "data"), str(image_root)])
    # 6 images, chunks of 3: each chunk's shares are of 3 entries (train 1, val 2)
    names = sorted(path.name for path in tmp_path.glob("data*.lst"))
    assert names == ["data_0_train.lst", "data_0_val.lst", "data_1_train.lst", "data_1_val.lst"]
    assert [line[0] for line in read_lst(tmp_path / "data_1_train.lst")] == ["3"]
    assert [line[0] for line in read_lst(tmp_path / "data_1_val.lst")] == ["4", "5"]


def test_recursive_list_prints_each_folder_and_label_as_mxnet_does(
    image_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    im2rec.main(["--list", "--recursive", str(tmp_path / "data"), str(image_root)])
    assert capsys.readouterr().out.splitlines()[:2] == ["cats 0", "dogs 1"]


def test_pack_label_stores_a_single_label_as_a_number_as_mxnet_does(image_root: Path, tmp_path: Path) -> None:
    # the cookbook's `--recursive --pass-through --pack-label`: MXNet 1.9.1 packs a label array only
    # for several labels, so the records are the header with a flag of 0 and the file's bytes
    prefix = tmp_path / "one"
    prefix.with_suffix(".lst").write_text("3\t1.000000\tdogs/0.png\n")
    im2rec.main(["--pass-through", "--pack-label", "--no-progress", str(prefix), str(image_root)])
    with recordio.MXIndexedRecordIO(f"{prefix}.idx", f"{prefix}.rec", "r") as reader:
        record = reader.read_idx(3)
    image_bytes = (image_root / "dogs" / "0.png").read_bytes()
    assert record == recordio.pack(recordio.IRHeader(0, 1.0, 3, 0), image_bytes)


def test_unreadable_image_is_skipped_with_a_warning(
    image_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (image_root / "cats" / "broken.png").write_bytes(b"not a png")
    prefix = str(tmp_path / "data")
    im2rec.main(["--list", "--recursive", prefix, str(image_root)])
    im2rec.main([prefix, str(image_root)])
    captured = capsys.readouterr()
    assert "skipping" in captured.err and "broken.png" in captured.err
    assert "6 records, 1 images skipped" in captured.out
    assert len(read_rec(Path(prefix))) == 6


def test_list_fields_are_read_without_surrounding_blanks_as_mxnet_does(tmp_path: Path) -> None:
    (tmp_path / "blanks.lst").write_text("0\t 1.000000\tcats/0.png  \r\n 3\t2.0 \t dogs/1.png\n")
    entries = im2rec.read_list(str(tmp_path / "blanks.lst"))
    assert entries == [im2rec.ListEntry(0, (1.0,), "cats/0.png"), im2rec.ListEntry(3, (2.0,), "dogs/1.png")]


def test_malformed_list_line_raises_format_error(tmp_path: Path) -> None:
    (tmp_path / "bad.lst").write_text("0\t1.0\ta.png\nzero\t1.0\tb.png\n")
    with pytest.raises(FormatError, match=r"bad.lst: line 2 is 'zero\\t1.0\\tb.png'"):
        im2rec.read_list(str(tmp_path / "bad.lst"))


def test_packing_without_a_list_is_an_error(image_root: Path, tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        im2rec.main([str(tmp_path / "missing"), str(image_root)])


def test_command_line_tool_lists_and_packs_end_to_end(image_root: Path, tmp_path: Path) -> None:
    package_parent = Path(lazynd.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    prefix = str(tmp_path / "pets")
    command = [sys.executable, "-m", "lazynd.tools.im2rec"]
    for extra in (["--list", "--recursive"], ["--resize", "20", "--num-thread", "2"]):
        subprocess.run([*command, *extra, prefix, str(image_root)], check=True, env=env)
    records = read_rec(Path(prefix))
    assert sorted(header.id for header, _ in records) == list(range(6))
    for header, image in records:
        colour = COLOURS["cats" if header.label == 0 else "dogs"]
        assert min(image.shape[:2]) == 20
        # JPEG at quality 95: a solid colour comes back within a few levels.
        assert np.abs(image.astype(int) - colour).max() <= 8
