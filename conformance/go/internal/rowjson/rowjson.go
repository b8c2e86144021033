// Package rowjson writes the vector rows of the cmd/ generators (urlparse, pemdecode): compact
// JSON without HTML escaping, and strings that are not UTF-8 as {"hex": "..."}.
package rowjson

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"unicode/utf8"
)

// Str is a string written as JSON text, or {"hex": ...} when it is not UTF-8.
type Str string

// MarshalJSON implements json.Marshaler.
func (s Str) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(s)) {
		return Marshal(string(s))
	}
	return Marshal(map[string]string{"hex": hex.EncodeToString([]byte(s))})
}

// Marshal is json.Marshal without HTML escaping (and without the encoder's newline).
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
