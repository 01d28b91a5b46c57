// Parsing shape-set CSV text: the fields, the seqlens grammar, hashes, and one test per kind
// of malformed row (each checking the line number and the reason).
#include <gtest/gtest.h>

#include <string>

#include "gdn/problems/shape_set.hpp"

namespace {

using gdn::problems::Layout;
using gdn::problems::parse_shape_set;
using gdn::problems::ShapeSet;
using gdn::problems::ShapeSetError;

const std::string kHeader = "name,h_qk,h_v,k,v,dtype,layout,seqlens,tag\n";

ShapeSet parse(const std::string& rows) {
  return parse_shape_set("# a comment\n" + kHeader + rows, "test", "test.csv");
}

// Parses text expected to be malformed; returns what() and checks it has "test.csv:<line>: ".
std::string error_of(const std::string& text, int line) {
  try {
    parse_shape_set(text, "test", "test.csv");
  } catch (const ShapeSetError& e) {
    const std::string message = e.what();
    std::printf("    %s\n", message.c_str());
    EXPECT_NE(message.find("test.csv:" + std::to_string(line) + ": "), std::string::npos)
        << message;
    EXPECT_FALSE(e.errors().empty());
    if (!e.errors().empty()) EXPECT_EQ(e.errors().front().line, line);
    return message;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return "";
}

std::string row_error(const std::string& row) {  // the row sits on line 3
  return error_of("# comment\n" + kHeader + row + "\n", 3);
}

TEST(ParseShapeSet, ReadsEveryField) {
  const ShapeSet set = parse(
      "ragged,2,8,128,128,bf16,packed,410+431+0,a tag with spaces\n"
      "\n"
      "  # an indented comment\n"
      "batch,4,16,128,128,fp16,batched,1024*3,\n");
  ASSERT_EQ(set.problems.size(), 2u);
  const auto& ragged = set.problems[0];
  EXPECT_EQ(ragged.name, "ragged");
  EXPECT_EQ(ragged.h_qk, 2);
  EXPECT_EQ(ragged.h_v, 8);
  EXPECT_EQ(ragged.k, 128);
  EXPECT_EQ(ragged.dtype, GDN_BF16);
  EXPECT_EQ(ragged.layout, Layout::Packed);
  EXPECT_EQ(ragged.seqlens, (std::vector<int64_t>{410, 431, 0}));
  EXPECT_EQ(ragged.tag, "a tag with spaces");
  EXPECT_EQ(ragged.source_line, 3);
  EXPECT_EQ(ragged.batch(), 1);
  EXPECT_EQ(ragged.tokens_per_row(), 841);
  EXPECT_EQ(ragged.num_seqs(), 3);
  EXPECT_EQ(ragged.max_seqlen(), 431);
  EXPECT_EQ(ragged.cu_seqlens(), (std::vector<int64_t>{0, 410, 841, 841}));

  const auto& batch = set.problems[1];
  EXPECT_EQ(batch.dtype, GDN_FP16);
  EXPECT_EQ(batch.layout, Layout::Batched);
  EXPECT_EQ(batch.seqlens, (std::vector<int64_t>{1024, 1024, 1024}));
  EXPECT_EQ(batch.batch(), 3);
  EXPECT_EQ(batch.tokens_per_row(), 1024);
  EXPECT_EQ(batch.total_tokens(), 3072);
  EXPECT_EQ(batch.tag, "");
  EXPECT_EQ(set.find("batch"), &set.problems[1]);
  EXPECT_EQ(set.find("absent"), nullptr);
}

TEST(ParseShapeSet, SeqlensRoundTripThroughTheCanonicalForm) {
  const ShapeSet set = parse("x,1,1,128,128,bf16,packed,64+64+0*2+7+64*3,\n");
  EXPECT_EQ(set.problems[0].seqlens_text(), "64*2+0*2+7+64*3");
  EXPECT_EQ(set.problems[0].seqlens_list(), "64,64,0,0,7,64,64,64");
}

TEST(ParseShapeSet, AcceptsWindowsLineEndingsAndSpacesAroundCells) {
  const ShapeSet set = parse_shape_set(
      "name, h_qk ,h_v,k,v,dtype,layout,seqlens,tag\r\n a ,1,2,128,128,bf16,packed,5,t\r\n",
      "test", "test.csv");
  ASSERT_EQ(set.problems.size(), 1u);
  EXPECT_EQ(set.problems[0].name, "a");
  EXPECT_EQ(set.problems[0].seqlens, std::vector<int64_t>{5});
}

TEST(ShapeSetHash, IgnoresNamesTagsAndCommentsButNotContent) {
  const auto a = parse("p,2,8,128,128,bf16,packed,100+28,one\n").problems[0];
  const auto b = parse("q,2,8,128,128,bf16,packed,100+28,two\n").problems[0];
  const auto c = parse("p,2,8,128,128,bf16,packed,28+100,one\n").problems[0];
  const auto d = parse("p,2,8,128,128,fp16,packed,100+28,one\n").problems[0];
  const auto e = parse("p,2,8,128,128,bf16,batched,64*2,\n").problems[0];
  const auto f = parse("p,2,8,128,128,bf16,packed,64*2,\n").problems[0];
  EXPECT_EQ(a.content_hash(), b.content_hash());
  EXPECT_NE(a.content_hash(), c.content_hash());
  EXPECT_NE(a.content_hash(), d.content_hash());
  EXPECT_NE(e.content_hash(), f.content_hash());
  EXPECT_EQ(a.hash_hex().size(), 16u);
}

// The hash is stored in results databases: it must not change between builds or platforms.
// This pins the serialisation (gdn-problem-v1); changing it is a database-visible change.
// The value is FNV-1a 64 over "gdn-problem-v1","2","8","128","128","bf16","packed","100,28",
// each followed by 0x1f (checked independently with a few lines of Python).
TEST(ShapeSetHash, IsPinned) {
  const auto p = parse("p,2,8,128,128,bf16,packed,100+28,\n").problems[0];
  EXPECT_EQ(p.hash_hex(), "67633ed6906dea0e");
}

TEST(ShapeSetHash, SetHashFollowsNamesContentAndOrder) {
  const ShapeSet one = parse("a,1,1,128,128,bf16,packed,5,\nb,1,1,128,128,bf16,packed,6,\n");
  const ShapeSet same = parse_shape_set(
      "# other comments\n" + kHeader + "a,1,1,128,128,bf16,packed,5,x\nb,1,1,128,128,bf16,packed,6,y\n",
      "test", "elsewhere.csv");
  const ShapeSet renamed = parse("a,1,1,128,128,bf16,packed,5,\nc,1,1,128,128,bf16,packed,6,\n");
  const ShapeSet swapped = parse("b,1,1,128,128,bf16,packed,6,\na,1,1,128,128,bf16,packed,5,\n");
  EXPECT_EQ(one.content_hash, same.content_hash);
  EXPECT_NE(one.content_hash, renamed.content_hash);
  EXPECT_NE(one.content_hash, swapped.content_hash);
}

TEST(MalformedShapeSet, WrongHeader) {
  const std::string m = error_of("# c\nname,h_qk,h_v,k,v,dtype,seqlens\nx,1,1,128,128,bf16,5\n", 2);
  EXPECT_NE(m.find("the header must be 'name,h_qk,h_v,k,v,dtype,layout,seqlens,tag'"),
            std::string::npos);
}

TEST(MalformedShapeSet, NoHeaderAtAll) {
  try {
    parse_shape_set("# only comments\n\n", "test", "test.csv");
    ADD_FAILURE() << "no error";
  } catch (const ShapeSetError& e) {
    EXPECT_NE(std::string(e.what()).find("test.csv: no header line"), std::string::npos)
        << e.what();
  }
}

TEST(MalformedShapeSet, NoRows) {
  try {
    parse_shape_set(kHeader, "test", "test.csv");
    ADD_FAILURE() << "no error";
  } catch (const ShapeSetError& e) {
    EXPECT_NE(std::string(e.what()).find("test.csv: no problem rows"), std::string::npos)
        << e.what();
  }
}

TEST(MalformedShapeSet, WrongFieldCount) {
  EXPECT_NE(row_error("x,1,1,128,128,bf16,packed,5").find("expected 9 comma-separated fields"),
            std::string::npos);
  EXPECT_NE(row_error("x,1,1,128,128,bf16,packed,5,t,extra").find("got 10"), std::string::npos);
}

TEST(MalformedShapeSet, BadName) {
  EXPECT_NE(row_error("has space,1,1,128,128,bf16,packed,5,").find("name 'has space'"),
            std::string::npos);
  EXPECT_NE(row_error(",1,1,128,128,bf16,packed,5,").find("name ''"), std::string::npos);
}

TEST(MalformedShapeSet, NonPositiveOrNonNumericInteger) {
  EXPECT_NE(row_error("x,0,1,128,128,bf16,packed,5,").find("h_qk must be a positive integer"),
            std::string::npos);
  EXPECT_NE(row_error("x,1,-8,128,128,bf16,packed,5,").find("h_v must be a positive integer"),
            std::string::npos);
  EXPECT_NE(row_error("x,1,1,12a,128,bf16,packed,5,").find("got '12a'"), std::string::npos);
  EXPECT_NE(row_error("x,1,1,128,,bf16,packed,5,").find("v must be a positive integer"),
            std::string::npos);
}

TEST(MalformedShapeSet, ValueHeadsNotAMultipleOfKeyHeads) {
  EXPECT_NE(row_error("x,4,6,128,128,bf16,packed,5,").find("h_v = 6 must be a multiple of h_qk = 4"),
            std::string::npos);
}

TEST(MalformedShapeSet, UnknownDtype) {
  EXPECT_NE(row_error("x,1,1,128,128,fp8,packed,5,").find("dtype must be bf16 or fp16; got 'fp8'"),
            std::string::npos);
}

TEST(MalformedShapeSet, UnknownLayout) {
  EXPECT_NE(row_error("x,1,1,128,128,bf16,varlen,5,").find("layout must be packed or batched"),
            std::string::npos);
}

TEST(MalformedShapeSet, BadSeqlens) {
  EXPECT_NE(row_error("x,1,1,128,128,bf16,packed,,").find("seqlens is empty"), std::string::npos);
  EXPECT_NE(row_error("x,1,1,128,128,bf16,packed,1024x8,").find("term '1024x8'"),
            std::string::npos);
  EXPECT_NE(row_error("x,1,1,128,128,bf16,packed,5++6,").find("term ''"), std::string::npos);
  EXPECT_NE(row_error("x,1,1,128,128,bf16,packed,-5,").find("term '-5'"), std::string::npos);
  EXPECT_NE(row_error("x,1,1,128,128,bf16,packed,64*0,").find("number of sequences"),
            std::string::npos);
  EXPECT_NE(row_error("x,1,1,128,128,bf16,packed,9223372036854775807+1,").find("overflows int64"),
            std::string::npos);
}

TEST(MalformedShapeSet, BatchedWithUnequalLengths) {
  EXPECT_NE(row_error("x,1,1,128,128,bf16,batched,64+65,").find("batched layout needs sequences "
                                                                "of one length"),
            std::string::npos);
}

TEST(MalformedShapeSet, DuplicateName) {
  const std::string m = error_of(kHeader + "x,1,1,128,128,bf16,packed,5,\n"
                                           "x,1,1,128,128,bf16,packed,6,\n", 3);
  EXPECT_NE(m.find("name 'x' is already used on line 2"), std::string::npos);
}

TEST(MalformedShapeSet, ReportsEveryBadRowWithItsLine) {
  try {
    parse_shape_set(kHeader + "a,1,1,128,128,bf16,packed,5,\n"
                              "b,0,1,128,128,bf16,packed,5,\n"
                              "c,1,1,128,128,bf16,packed,5,\n"
                              "d,1,1,128,128,bf16,oops,5,\n",
                    "test", "test.csv");
    ADD_FAILURE() << "no error";
  } catch (const ShapeSetError& e) {
    ASSERT_EQ(e.errors().size(), 2u) << e.what();
    EXPECT_EQ(e.errors()[0].line, 3);
    EXPECT_EQ(e.errors()[1].line, 5);
    const std::string m = e.what();
    EXPECT_NE(m.find("test.csv:3: h_qk"), std::string::npos) << m;
    EXPECT_NE(m.find("test.csv:5: layout"), std::string::npos) << m;
  }
}

}  // namespace

// Many rows of the largest sequence count stay within one bound for the whole set (each row
// alone is capped; a small file must not expand into gigabytes of lengths).
TEST(ParseShapeSet, TheWholeSetHasASequenceBound) {
  std::string rows;
  for (int i = 0; i < 8; ++i) rows += "r" + std::to_string(i) + ",1,1,128,128,bf16,packed,1*1048576,x\n";
  try {
    parse(rows);
    FAIL() << "no error";
  } catch (const ShapeSetError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 4194304 sequences in all"), std::string::npos) << e.what();
  }
}
