package api

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"strconv"
)

// multipartSlack is what a multipart body may carry beyond its file: boundaries, part
// headers and a few small fields.
const multipartSlack = 64 << 10

// errBodyTooLarge is returned by cappedReader once its limit is passed.
var errBodyTooLarge = errors.New("request body too large")

// cappedReader fails with errBodyTooLarge after n bytes instead of reading on, so an
// oversized body is refused while it streams in.
type cappedReader struct {
	r io.Reader
	n int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.n <= 0 {
		return 0, errBodyTooLarge
	}
	if int64(len(p)) > c.n {
		p = p[:c.n]
	}
	n, err := c.r.Read(p)
	c.n -= int64(n)
	return n, err
}

// multipartBoundary returns the boundary of a multipart/form-data content type.
func multipartBoundary(contentType string) (string, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return "", fail("invalid_upload", "send the file as multipart/form-data")
	}
	return params["boundary"], nil
}

// receiveFile streams the one part named "file" of a multipart body to dst, holding no
// more than a small buffer in memory. The file may be at most limit bytes; other fields
// are read and dropped. It refuses a body without the file, with a second one, or too big.
func receiveFile(body io.Reader, boundary string, limit int64, dst io.Writer) (filename string, size int64, err error) {
	mr := multipart.NewReader(&cappedReader{r: body, n: limit + multipartSlack}, boundary)
	found := false
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", 0, uploadReadError(err, limit)
		}
		if part.FormName() != "file" {
			if _, err := io.Copy(io.Discard, part); err != nil {
				return "", 0, uploadReadError(err, limit)
			}
			continue
		}
		if found {
			return "", 0, fail("too_many_files", "send exactly one file")
		}
		found = true
		filename = part.FileName()
		size, err = io.Copy(dst, io.LimitReader(part, limit+1))
		if err != nil {
			return "", 0, uploadReadError(err, limit)
		}
		if size > limit {
			return "", 0, tooLarge(limit)
		}
	}
	if !found {
		return "", 0, fail("no_file", "the form has no field named file")
	}
	return filename, size, nil
}

func uploadReadError(err error, limit int64) error {
	if errors.Is(err, errBodyTooLarge) {
		return tooLarge(limit)
	}
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	return fail("invalid_upload", "the upload is not a complete multipart form: "+err.Error())
}

func tooLarge(limit int64) error {
	return fail("file_too_large",
		"the file is larger than the limit of "+humanBytes(limit))
}

// humanBytes writes a byte count as the page states limits: "25 MB".
func humanBytes(n int64) string {
	const mb = 1 << 20
	if n%mb == 0 {
		return strconv.FormatInt(n/mb, 10) + " MB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
