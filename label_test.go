package subsecond

import (
	"strings"
	"testing"
)

// TestLabelProblem checks each rule of a label at its edge: a key of
// exactly MaxLabelKey bytes and a value of exactly MaxLabelValue bytes
// pass, one byte more is refused, and a value's bound counts bytes, not
// characters.
func TestLabelProblem(t *testing.T) {
	key64 := "k" + strings.Repeat("x", MaxLabelKey-1)
	val256 := strings.Repeat("v", MaxLabelValue)
	// 128 two-byte characters: 256 bytes; one more is 258 bytes in 129
	// characters, under the bound if it counted characters.
	wide := strings.Repeat("é", MaxLabelValue/2)
	for _, tc := range []struct {
		l    Label
		want string // "" or a part of the problem
	}{
		{Label{"zone", "us-east-1a"}, ""},
		{Label{key64, "v"}, ""},
		{Label{key64 + "x", "v"}, "the key is longer than 64 bytes"},
		{Label{"zone", val256}, ""},
		{Label{"zone", val256 + "v"}, "the value of zone is longer than 256 bytes"},
		{Label{"zone", wide}, ""},
		{Label{"zone", wide + "é"}, "the value of zone is longer than 256 bytes"},
		{Label{"", "v"}, "the key is empty"},
		{Label{"Zone", "v"}, `the key "Zone" does not start with a lower-case letter`},
		{Label{"1zone", "v"}, "does not start with a lower-case letter"},
		{Label{"zo ne", "v"}, "holds a character other than"},
		{Label{"a.b-c_9", "v"}, ""},
		{Label{"zone", ""}, "the value of zone is empty"},
		{Label{"zone", "a\xffb"}, "is not UTF-8"},
		{Label{"zone", "a\nb"}, "holds a control character"},
		{Label{"zone", "a\u0085b"}, "holds a control character"},
		{Label{"owner", "<script>alert(1)</script> & ünïcode"}, ""},
	} {
		got := LabelProblem(tc.l)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("LabelProblem(%.40q=%.40q) = %q; want %q", tc.l.Key, tc.l.Value, got, tc.want)
		}
	}
}
