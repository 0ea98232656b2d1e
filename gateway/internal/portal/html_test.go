package portal_test

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func parse(t *testing.T, body string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatalf("%v:\n%s", err, body)
	}
	return doc
}

// findAll returns the elements named tag, in document order.
func findAll(n *html.Node, tag string) []*html.Node {
	var out []*html.Node
	for d := range n.Descendants() {
		if d.Type == html.ElementNode && d.Data == tag {
			out = append(out, d)
		}
	}
	return out
}

func attr(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, name string) bool {
	for _, a := range n.Attr {
		if a.Key == name {
			return true
		}
	}
	return false
}

// text is the text an element holds, spaces collapsed.
func text(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// checkPage holds a page to what every portal page promises: a language,
// one h1, a label for every field, a CSRF token in every form that posts
// (but the link's), buttons that say what they do, and no inline script,
// style or event handler for the policy to refuse.
func checkPage(t *testing.T, name, body string) {
	t.Helper()
	doc := parse(t, body)
	if htmls := findAll(doc, "html"); len(htmls) != 1 || attr(htmls[0], "lang") != "en" {
		t.Errorf("%s: no lang", name)
	}
	if h1 := findAll(doc, "h1"); len(h1) != 1 || text(h1[0]) == "" {
		t.Errorf("%s: %d h1", name, len(h1))
	}
	if metas := findAll(doc, "meta"); !containsFunc(metas, func(m *html.Node) bool { return attr(m, "name") == "viewport" }) {
		t.Errorf("%s: no viewport", name)
	}
	labelled := map[string]bool{}
	for _, l := range findAll(doc, "label") {
		if text(l) != "" {
			labelled[attr(l, "for")] = true
		}
	}
	for _, tag := range []string{"input", "textarea", "select"} {
		for _, in := range findAll(doc, tag) {
			if attr(in, "type") == "hidden" {
				continue
			}
			if id := attr(in, "id"); id == "" || !labelled[id] {
				t.Errorf("%s: a %s without a label: %v", name, tag, in.Attr)
			}
		}
	}
	for _, form := range findAll(doc, "form") {
		if attr(form, "method") != "post" || strings.HasPrefix(attr(form, "action"), "/portal/open/") {
			continue
		}
		if !containsFunc(findAll(form, "input"), func(in *html.Node) bool {
			return attr(in, "type") == "hidden" && attr(in, "name") == "csrf" && attr(in, "value") != ""
		}) {
			t.Errorf("%s: the form to %s has no CSRF token", name, attr(form, "action"))
		}
	}
	for _, b := range findAll(doc, "button") {
		if text(b) == "" {
			t.Errorf("%s: a button says nothing", name)
		}
	}
	for _, s := range findAll(doc, "script") {
		if attr(s, "src") == "" || text(s) != "" {
			t.Errorf("%s: an inline script", name)
		}
	}
	if len(findAll(doc, "style")) > 0 {
		t.Errorf("%s: an inline style sheet", name)
	}
	for d := range doc.Descendants() {
		for _, a := range d.Attr {
			if a.Key == "style" || strings.HasPrefix(a.Key, "on") {
				t.Errorf("%s: <%s %s>", name, d.Data, a.Key)
			}
		}
	}
}

func containsFunc(nodes []*html.Node, f func(*html.Node) bool) bool {
	for _, n := range nodes {
		if f(n) {
			return true
		}
	}
	return false
}
