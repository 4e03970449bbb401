package override

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"slices"
	"strconv"

	"github.com/fedkit/fedkit/federation"
)

// The desired-state hash (federation.DesiredHashAnnotation) lets sync skip an update that
// would change nothing. It covers what the federation wants for one cluster and nothing the
// member owns:
//
//	hash = SHA-256 over a canonical encoding of D, where D is the object Render returns for
//	the cluster when no member object exists (no retention), without the two annotations
//	federation.DesiredHashAnnotation and federation.RevisionAnnotation.
//
// So the hash changes when the template, the overrides that apply to the cluster, the
// scheduled replicas, the identity, the TypeConfig or fedkit's bookkeeping labels change,
// and does not change when the member's resourceVersion, allocated clusterIP, member-added
// labels or HPA-driven replicas do. The revision is left out so that a new revision that
// renders the same object for a cluster does not force a write there (sync may record the
// new revision for that cluster without an update). The value is "sha256:" and 32 hex
// digits (128 bits); compare it only for equality.
//
// The canonical encoding sorts object members by key and encodes numbers as encoding/json
// does, so the hash is stable across processes, map iteration orders, and int64/float64
// forms of the same number.

// hasher streams the canonical encoding of a value into SHA-256 without building it.
type hasher struct {
	h    hash.Hash
	buf  []byte   // pending bytes, flushed to h when full
	keys []string // scratch space for sorted keys, used as a stack by nested maps
}

// desiredHash returns the hash annotation value for root.
func desiredHash(root map[string]interface{}) (string, error) {
	var bufArr [1024]byte
	w := hasher{h: sha256.New(), buf: bufArr[:0]}
	if err := w.object(root, 0); err != nil {
		return "", err
	}
	w.flush()
	var sum [sha256.Size]byte
	var out [7 + 32]byte
	copy(out[:], "sha256:")
	hex.Encode(out[7:], w.h.Sum(sum[:0])[:16])
	return string(out[:]), nil
}

func (w *hasher) flush() {
	w.h.Write(w.buf)
	w.buf = w.buf[:0]
}

func (w *hasher) byte(b byte) {
	if len(w.buf) == cap(w.buf) {
		w.flush()
	}
	w.buf = append(w.buf, b)
}

// str writes a string with its length first, so no two strings concatenate ambiguously.
func (w *hasher) str(s string) {
	if len(w.buf)+len(s)+24 > cap(w.buf) {
		w.flush()
	}
	if len(s)+24 > cap(w.buf) {
		w.buf = strconv.AppendInt(w.buf, int64(len(s)), 10)
		w.buf = append(w.buf, '"')
		w.flush()
		w.h.Write([]byte(s))
		return
	}
	w.buf = strconv.AppendInt(w.buf, int64(len(s)), 10)
	w.buf = append(w.buf, '"')
	w.buf = append(w.buf, s...)
}

// level marks where the encoder is: at the root (0), in metadata (1), in its annotations (2).
const (
	levelRoot = iota
	levelMetadata
	levelAnnotations
	levelOther
)

// object encodes a map, skipping the hash and revision annotations.
func (w *hasher) object(m map[string]interface{}, level int) error {
	start := len(w.keys)
	for k := range m {
		if level == levelAnnotations && (k == federation.DesiredHashAnnotation || k == federation.RevisionAnnotation) {
			continue
		}
		w.keys = append(w.keys, k)
	}
	keys := w.keys[start:]
	slices.Sort(keys)
	w.byte('{')
	for i := 0; i < len(keys); i++ {
		k := w.keys[start+i] // re-read: nested calls may grow (move) w.keys
		w.str(k)
		next := levelOther
		switch {
		case level == levelRoot && k == "metadata":
			next = levelMetadata
		case level == levelMetadata && k == "annotations":
			next = levelAnnotations
		}
		if err := w.value(m[k], next); err != nil {
			return err
		}
	}
	w.byte('}')
	w.keys = w.keys[:start]
	return nil
}

func (w *hasher) value(v interface{}, level int) error {
	switch x := v.(type) {
	case map[string]interface{}:
		return w.object(x, level)
	case []interface{}:
		w.byte('[')
		for _, e := range x {
			if err := w.value(e, levelOther); err != nil {
				return err
			}
		}
		w.byte(']')
	case string:
		w.byte('s')
		w.str(x)
	case bool:
		if x {
			w.byte('t')
		} else {
			w.byte('f')
		}
	case nil:
		w.byte('n')
	default:
		if len(w.buf)+40 > cap(w.buf) {
			w.flush()
		}
		w.buf = append(w.buf, '#')
		var ok bool
		if w.buf, ok = appendNumber(w.buf, v); !ok {
			return fmt.Errorf("%w: %T has no JSON form", ErrInvalidValue, v)
		}
		w.buf = append(w.buf, ';')
	}
	return nil
}
