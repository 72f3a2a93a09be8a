"""Scans: pages without a usable text layer read by OCR. Tesseract reads page images (``ocr``,
its results ``ocr_types``, cached by image bytes in ``ocr_cache``); ``scan`` turns what it read
into the PDF loader's lines with their boxes; ``scan_image`` loads image files (``.png``,
``.tif``, ...) that way; ``page_images`` opens very large page images with a note; and
``text_quality`` judges whether a text layer reads as words at all (else it is OCR'd)."""
