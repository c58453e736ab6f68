// goodbye_book_test.cpp - GoodbyeBook, the per-rank goodbye exchange of
// llc_finalize: whom we wait for (heard from, no goodbye and not gone yet),
// whom we owe a goodbye, and the report lines.
#include "transport/goodbye_book.hpp"

#include <gtest/gtest.h>

using llc::GoodbyeBook;

TEST(GoodbyeBook, QuietUntilHeardThenUntilItsGoodbye)
{
    GoodbyeBook b(4);
    EXPECT_TRUE(b.quiet()) << "heard from nobody: nothing to wait for";
    b.sent(1);
    EXPECT_TRUE(b.quiet()) << "sending to a peer is no reason to wait for it";
    b.heard(2);
    b.heard(3);
    EXPECT_FALSE(b.quiet());
    EXPECT_EQ(b.waiting_count(), 2u);
    EXPECT_TRUE(b.waiting_for(2));
    EXPECT_FALSE(b.waiting_for(1));
    b.heard(2); // heard again: still one peer to wait for
    EXPECT_EQ(b.waiting_count(), 2u);
    b.got(2);
    EXPECT_FALSE(b.waiting_for(2));
    EXPECT_EQ(b.waiting_count(), 1u);
    EXPECT_FALSE(b.quiet());
    b.got(2); // a repeated goodbye counts once
    EXPECT_EQ(b.waiting_count(), 1u);
    b.got(3);
    EXPECT_TRUE(b.quiet());
    b.heard(3); // a frame after its goodbye (the goodbye's own): still quiet
    EXPECT_TRUE(b.quiet());
}

TEST(GoodbyeBook, AGonePeerIsNotWaitedFor)
{
    GoodbyeBook b(3);
    b.heard(0);
    b.heard(1);
    b.gone(0);
    EXPECT_FALSE(b.waiting_for(0));
    EXPECT_EQ(b.waiting_count(), 1u);
    b.gone(0);
    b.got(0); // its goodbye after it was given up: no double count
    EXPECT_EQ(b.waiting_count(), 1u);
    b.gone(2); // gone before heard: heard later is no wait either
    b.heard(2);
    EXPECT_FALSE(b.waiting_for(2));
    EXPECT_EQ(b.waiting_count(), 1u);
    b.got(1);
    EXPECT_TRUE(b.quiet());
}

TEST(GoodbyeBook, OwesAGoodbyeToEveryPeerSentToUntilSaid)
{
    GoodbyeBook b(3);
    EXPECT_FALSE(b.owes_goodbye(0));
    b.heard(0);
    EXPECT_FALSE(b.owes_goodbye(0)) << "heard from, never sent to: it waits for nothing of ours";
    b.sent(1);
    EXPECT_TRUE(b.owes_goodbye(1));
    b.said(1);
    EXPECT_FALSE(b.owes_goodbye(1));
    EXPECT_TRUE(b.has_said(1));
    EXPECT_FALSE(b.has_said(2));
    EXPECT_FALSE(b.quiet()) << "saying goodbye is not hearing one";
}

TEST(GoodbyeBook, ReportLines)
{
    EXPECT_EQ(GoodbyeBook::bye_flags(false, false), "--");
    EXPECT_EQ(GoodbyeBook::bye_flags(true, false), "s-");
    EXPECT_EQ(GoodbyeBook::bye_flags(false, true), "-r");
    EXPECT_EQ(GoodbyeBook::bye_flags(true, true), "sr");
    GoodbyeBook b(8);
    EXPECT_EQ(b.waiting_report(), "");
    b.sent(3);
    b.said(3);
    b.heard(3);
    b.heard(7);
    b.heard(5);
    b.gone(5);
    EXPECT_EQ(b.line(3), "rank 3: sent, heard, bye s-");
    EXPECT_EQ(b.line(5), "rank 5: heard, gone, bye --");
    EXPECT_EQ(b.line(0), "rank 0: bye --");
    EXPECT_EQ(b.waiting_report(), "waiting for the goodbye of rank 3, 7");
    b.got(3);
    EXPECT_EQ(b.line(3), "rank 3: sent, heard, bye sr");
    EXPECT_EQ(b.waiting_report(), "waiting for the goodbye of rank 7");
}
