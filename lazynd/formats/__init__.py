"""File formats lazynd reads and writes, compatible with MXNet's, and the one file writer they share.

- :mod:`~lazynd.formats.fileio`: reading whole files and writing them atomically, on local
  disks and (through fsspec) remote stores; :mod:`~lazynd.formats.fileio_temporary` names
  and cleans up its temporary files, :mod:`~lazynd.formats.fileio_urls` tells URLs from paths
  and reaches their filesystems.
- :mod:`~lazynd.formats.ndarray_file`: MXNet's binary NDArray-list format (``nd.save`` /
  ``nd.load``) on NumPy arrays; :mod:`~lazynd.formats.ndarray_record` holds the layout of
  one array record.
- :mod:`~lazynd.formats.recordio_file`, :mod:`~lazynd.formats.recordio_indexed`,
  :mod:`~lazynd.formats.recordio_pack`: RecordIO files, their index and the image record
  header; users reach them as ``mx.recordio``.
- :mod:`~lazynd.formats.idx`: the IDX format of MNIST.

These modules work on bytes and NumPy arrays, never on NDArrays: the NDArray side of
``nd.save`` / ``nd.load`` is :mod:`lazynd.ndarray.serialization`.  Every reader validates
what it reads and raises :class:`~lazynd.errors.FormatError` naming the file.
"""
